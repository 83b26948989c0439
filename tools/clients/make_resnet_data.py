# Data for introductory_parser_samples: a torchvision ResNet-50 (random weights, seed 0) exported to ONNX, 3 synthetic images.
import sys, types
sys.modules["torchvision._meta_registrations"] = types.ModuleType("m")
import numpy as np, torch, torchvision
from PIL import Image
torch.manual_seed(0)
m = torchvision.models.resnet50().eval()
torch.onnx.export(m, torch.randn(1, 3, 224, 224), "ResNet50.onnx", input_names=["gpu_0/data_0"], output_names=["gpu_0/softmax_1"], opset_version=13, dynamo=False)
rng = np.random.default_rng(0)
for n in ["binoculars.jpeg", "reflex_camera.jpeg", "tabby_tiger_cat.jpg"]:
    Image.fromarray(rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)).save(n)
open("class_labels.txt", "w").write("\n".join("class %d" % i for i in range(1000)))
