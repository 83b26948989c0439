# Agreement check for network_api_pytorch_mnist: the sample's own main() with training skipped (MnistModel.learn
# replaced by a no-op: random weights, so the run takes seconds), its inference output compared with the PyTorch
# network on the same test image.  usage: shim.py check_mnist.py SAMPLE_DIR
import sys, os, importlib, numpy as np, torch
d = sys.argv[1]; sys.path.insert(0, d); sys.argv = [sys.argv[0]]
model = importlib.import_module("model")
sample = importlib.import_module("sample")
common = sample.common
seen = {}
model.MnistModel.learn = lambda self, num_epochs=2: None
orig_case = model.MnistModel.get_random_testcase
def case(self):
    img, label = orig_case(self); seen["img"] = np.array(img, np.float32); seen["net"] = self.network; return img, label
model.MnistModel.get_random_testcase = case
for fn in ("do_inference", "do_inference_v2"):
    if hasattr(common, fn):
        f = getattr(common, fn)
        def wrap(*a, _f=f, **k):
            out = _f(*a, **k); seen["out"] = np.array(out[0]).copy(); return out
        setattr(common, fn, wrap)
sample.main()
with torch.no_grad():
    ref = seen["net"](torch.from_numpy(seen["img"]).reshape(1, 1, 28, 28)).numpy().ravel()
out = seen["out"].ravel()
# the network ends in log_softmax; the sample's engine stops at the last fully connected layer (before it)
ref_logits = ref  # log_softmax(z) = z - logsumexp(z): compare after the same normalization
out_ls = out - np.log(np.exp(out - out.max()).sum()) - out.max()
err = np.abs(out_ls - ref_logits).max() / np.abs(ref_logits).max()
print("max rel err vs PyTorch (log_softmax of the engine's logits): %.2e, argmax %d/%d" % (err, out.argmax(), ref.argmax()))
assert err < 1e-4
