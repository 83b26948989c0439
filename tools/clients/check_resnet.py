# Agreement check for introductory_parser_samples/onnx_resnet50.py: the sample's own build_engine_onnx and
# load_normalized_test_case, run against onnxruntime on the same input.  usage: shim.py check_resnet.py SAMPLE_DIR
import sys, os, importlib, numpy as np
d = sys.argv[1]; sys.path.insert(0, d); sys.path.insert(1, os.path.dirname(d)); sys.argv = [sys.argv[0], "-d", "/work/clients_run/data"]
s = importlib.import_module("onnx_resnet50")
import onnxruntime as ort
m = "/work/clients_run/data/resnet50/ResNet50.onnx"
f = getattr(s, "build_engine_onnx")
engine = f(m)
x = np.empty(3 * 224 * 224, np.float32)
s.load_normalized_test_case("/work/clients_run/data/resnet50/binoculars.jpeg", x)
ctx = engine.create_execution_context()
out = np.empty((1, 1000), np.float32)
ctx.execute_v2([x.ctypes.data, out.ctypes.data])
ref = ort.InferenceSession(m).run(None, {"gpu_0/data_0": x.reshape(1, 3, 224, 224)})[0]
err = np.abs(out - ref).max() / np.abs(ref).max()
print("max rel err vs onnxruntime: %.2e  argmax %d/%d" % (err, out.argmax(), ref.argmax()))
assert err < 1e-3
