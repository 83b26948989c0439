# Writes a version-2 plan with trtlite at 0fce3d6 (the last version-2 writer), kernels portable (TRTL_CPU_MASK=0).
import numpy as np, trtlite as trt, sys
b = trt.Builder(trt.Logger(trt.Logger.WARNING)); net = b.create_network(0)
rng = np.random.default_rng(2024)
x = net.add_input("x", trt.float32, (1, 3, 8, 8))
w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32); bias = rng.standard_normal(4).astype(np.float32)
c = net.add_convolution_nd(x, 4, (3, 3), w, bias); c.padding_nd = (1, 1); c.name = "conv"
r = net.add_activation(c.get_output(0), trt.ActivationType.RELU); r.name = "relu"
fw = rng.standard_normal((5, 256)).astype(np.float32); fb = rng.standard_normal(5).astype(np.float32)
f = net.add_fully_connected(r.get_output(0), 5, fw, fb); f.name = "fc"
f.get_output(0).name = "y"
net.mark_output(f.get_output(0))
plan = b.build_serialized_network(net, b.create_builder_config())
open(sys.argv[1], "wb").write(bytes(plan))
