# tensorrtx Python builders: write the .wts the script expects from a seeded PyTorch model (tensorrtx's gen_wts.py format:
# a count line, then "name n hex(>f)..." per state_dict entry), run the script's own "-s" (build + serialize) and "-d"
# (deserialize + infer) unchanged through the shim, then run the engine it wrote on a random input against PyTorch.
# usage: python check_tensorrtx.py NAME
import os, struct, subprocess, sys, types
sys.modules["torchvision._meta_registrations"] = types.ModuleType("m")
import numpy as np, torch, torch.nn as nn, torchvision

R = "/work/clients_run/src/tensorrtx/"
WT = os.environ.get("TRTLITE_WT", "/work/wt/clients2")


class Lenet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = nn.functional.avg_pool2d(torch.relu(self.conv1(x)), 2)
        x = nn.functional.avg_pool2d(torch.relu(self.conv2(x)), 2).flatten(1)
        return torch.softmax(self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x))))), 1)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(1, 1)

    def forward(self, x):
        return self.linear(x)


CASES = {  # name: (script, model factory, wts file, input shape (no batch), engine file)
    "lenet": ("lenet/lenet.py", Lenet5, "lenet5.wts", (1, 32, 32), "lenet5.engine"),
    "mlp": ("mlp/mlp.py", Mlp, "mlp.wts", (1, 1, 1), "mlp.engine"),
    "alexnet": ("alexnet/alexnet.py", torchvision.models.alexnet, "alexnet.wts", (3, 224, 224), "alexnet.engine"),
    "resnet50": ("resnet/resnet50.py", torchvision.models.resnet50, "resnet50.wts", (3, 224, 224), "resnet50.engine"),
    "wide_resnet50": ("resnet/wide_resnet50.py", torchvision.models.wide_resnet50_2, "wide_resnet50.wts", (3, 224, 224),
                      "wide_resnet50.engine"),
    "densenet121": ("densenet/densenet121.py", torchvision.models.densenet121, "densenet121.wts", (3, 224, 224),
                    "densenet121.engine"),
    "mobilenet_v2": ("mobilenet/mobilenetv2/mobilenet_v2.py", torchvision.models.mobilenet_v2, "mobilenetv2.wts",
                     (3, 224, 224), "mobilenetv2.engine"),
}


def main(name):
    script, factory, wts, shape, engine_file = CASES[name]
    d = os.path.dirname(R + script)
    torch.manual_seed(0)
    m = factory().eval()
    for mod in m.modules():  # non-trivial batch-norm statistics
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1); mod.running_var.uniform_(0.5, 1.5)
    if not os.environ.get("SKIP_WTS"):
        sys.path.insert(0, "/work/clients_run")
        from write_wts import write_wts
        write_wts(os.path.join(d, wts), m.state_dict())
    env = dict(os.environ, PYTHONPATH="/work/clients_run:" + WT, SHIM_TORCH="0", SHIM_POLYGRAPHY="0")
    for flag in (("-d",) if os.environ.get("SKIP_WTS") else ("-s", "-d")):
        p = subprocess.run([sys.executable, "/work/clients_run/shim.py", R + script, flag], cwd=d, env=env,
                           capture_output=True, text=True, timeout=1800)
        print("%s %s: rc=%d %s" % (name, flag, p.returncode, (p.stdout + p.stderr).strip().splitlines()[-1:]))
        if p.returncode:
            print((p.stdout + p.stderr)[-3000:]); return 1
    sys.path.insert(0, WT)
    import trtlite as trt
    e = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(open(os.path.join(d, engine_file), "rb").read())
    ctx = e.create_execution_context()
    x = np.random.default_rng(1).standard_normal((1,) + shape).astype(np.float32)
    out = np.empty((1,) + tuple(e.get_binding_shape(1)), np.float32)
    ctx.execute(1, [x.ctypes.data, out.ctypes.data])
    with torch.no_grad():
        ref = m(torch.from_numpy(x)).numpy().reshape(out.shape)
    err = np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-30)
    print("%s: max rel err vs PyTorch %.2e (argmax %d/%d)" % (name, err, out.argmax(), ref.argmax()))
    return 0 if err < 1e-3 else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
