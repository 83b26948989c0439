"""Run a TensorRT client on trtlite: `python shim.py script.py args...`.

The same shim for every client:
  * `import tensorrt` (and `tensorrt.plugin`) gives trtlite;
  * CUDA memory calls (cuda-python's runtime/driver, pycuda) become host allocations and memmoves;
  * PyTorch 'cuda' devices become the CPU (torch is a CPU build here);
  * torchvision's CUDA meta registrations are stubbed (issue #10).
Nothing of the client's code is changed.
"""
import ctypes
import enum
import os
import runpy
import sys
import types

import numpy as np

import trtlite

sys.modules["tensorrt"] = trtlite
if hasattr(trtlite, "plugin"):
    sys.modules["tensorrt.plugin"] = trtlite.plugin
sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")

# ---------------------------------------------------------------- host "device" memory
_ALLOCS = {}


def _malloc(nbytes):
    buf = ctypes.create_string_buffer(max(int(nbytes), 1) + 64)
    addr = ctypes.addressof(buf)
    aligned = (addr + 63) & ~63
    _ALLOCS[aligned] = buf
    return aligned


def _addr(x):
    if isinstance(x, np.ndarray):
        return x.ctypes.data
    if hasattr(x, "data_ptr"):
        return x.data_ptr()
    if hasattr(x, "ptr"):
        return int(x.ptr)
    return int(x)


def _memmove(dst, src, nbytes):
    ctypes.memmove(_addr(dst), _addr(src), int(nbytes))


# ---------------------------------------------------------------- cuda-python
class cudaError_t(enum.IntEnum):
    cudaSuccess = 0


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0


class nvrtcResult(enum.IntEnum):
    NVRTC_SUCCESS = 0


class cudaMemcpyKind(enum.IntEnum):
    cudaMemcpyHostToHost = 0
    cudaMemcpyHostToDevice = 1
    cudaMemcpyDeviceToHost = 2
    cudaMemcpyDeviceToDevice = 3
    cudaMemcpyDefault = 4


class _Handle(int):
    def getPtr(self):
        return int(self)


cudaStream_t = _Handle
OK = cudaError_t.cudaSuccess


def _rt_module(name):
    m = types.ModuleType(name)
    m.cudaError_t = cudaError_t
    m.cudaMemcpyKind = cudaMemcpyKind
    m.cudaStream_t = cudaStream_t
    m.cudaMalloc = lambda n: (OK, _malloc(n))
    m.cudaMallocHost = lambda n: (OK, _malloc(n))
    m.cudaFree = lambda p: (OK,)
    m.cudaFreeHost = lambda p: (OK,)
    m.cudaMemcpy = lambda d, s, n, k: (_memmove(d, s, n), OK)[1:]
    m.cudaMemcpyAsync = lambda d, s, n, k, st=0: (_memmove(d, s, n), OK)[1:]
    m.cudaMemset = lambda p, v, n: (ctypes.memset(_addr(p), v, int(n)), OK)[1:]
    m.cudaMemsetAsync = lambda p, v, n, st=0: (ctypes.memset(_addr(p), v, int(n)), OK)[1:]
    m.cudaStreamCreate = lambda: (OK, cudaStream_t(1))
    m.cudaStreamCreateWithFlags = lambda f=0: (OK, cudaStream_t(1))
    m.cudaStreamDestroy = lambda s: (OK,)
    m.cudaStreamSynchronize = lambda s: (OK,)
    m.cudaDeviceSynchronize = lambda: (OK,)
    m.cudaGetErrorName = lambda e: (OK, b"cudaSuccess")
    m.cudaGetErrorString = lambda e: (OK, b"no error")
    m.cudaSetDevice = lambda d: (OK,)
    m.cudaGetDevice = lambda: (OK, 0)
    m.cudaGetDeviceCount = lambda: (OK, 1)
    return m


def _drv_module(name):
    m = types.ModuleType(name)
    m.CUresult = CUresult
    m.CUstream = _Handle
    m.CUdeviceptr = _Handle
    m.cuInit = lambda f: (CUresult.CUDA_SUCCESS,)
    m.cuDeviceGet = lambda i: (CUresult.CUDA_SUCCESS, 0)
    m.cuCtxCreate = lambda *a: (CUresult.CUDA_SUCCESS, 1)
    m.cuCtxDestroy = lambda c: (CUresult.CUDA_SUCCESS,)
    m.cuGetErrorName = lambda e: (CUresult.CUDA_SUCCESS, b"CUDA_SUCCESS")
    m.cuMemAlloc = lambda n: (CUresult.CUDA_SUCCESS, _malloc(n))
    m.cuMemFree = lambda p: (CUresult.CUDA_SUCCESS,)
    m.cuMemcpyHtoD = lambda d, s, n: (_memmove(d, s, n), CUresult.CUDA_SUCCESS)[1:]
    m.cuMemcpyDtoH = lambda d, s, n: (_memmove(d, s, n), CUresult.CUDA_SUCCESS)[1:]
    m.cuMemcpyDtoD = lambda d, s, n: (_memmove(d, s, n), CUresult.CUDA_SUCCESS)[1:]
    m.cuMemcpyHtoDAsync = lambda d, s, n, st=0: (_memmove(d, s, n), CUresult.CUDA_SUCCESS)[1:]
    m.cuMemcpyDtoHAsync = lambda d, s, n, st=0: (_memmove(d, s, n), CUresult.CUDA_SUCCESS)[1:]
    m.cuMemcpyDtoDAsync = lambda d, s, n, st=0: (_memmove(d, s, n), CUresult.CUDA_SUCCESS)[1:]
    m.cuStreamCreate = lambda f=0: (CUresult.CUDA_SUCCESS, _Handle(1))
    m.cuStreamSynchronize = lambda s: (CUresult.CUDA_SUCCESS,)
    return m


def _nvrtc_module(name):
    m = types.ModuleType(name)
    m.nvrtcResult = nvrtcResult
    m.nvrtcGetErrorString = lambda e: (nvrtcResult.NVRTC_SUCCESS, b"")
    return m


cuda_pkg = types.ModuleType("cuda")
cuda_pkg.__path__ = []
bindings = types.ModuleType("cuda.bindings")
bindings.__path__ = []
rt, drv, nv = _rt_module("cuda.bindings.runtime"), _drv_module("cuda.bindings.driver"), _nvrtc_module("cuda.bindings.nvrtc")
bindings.runtime, bindings.driver, bindings.nvrtc = rt, drv, nv
cuda_pkg.bindings, cuda_pkg.cudart, cuda_pkg.cuda, cuda_pkg.nvrtc = bindings, rt, drv, nv
sys.modules.update({"cuda": cuda_pkg, "cuda.bindings": bindings, "cuda.bindings.runtime": rt,
                    "cuda.bindings.driver": drv, "cuda.bindings.nvrtc": nv, "cuda.cudart": rt,
                    "cuda.cuda": drv, "cuda.nvrtc": nv})

# ---------------------------------------------------------------- pycuda
pycuda = types.ModuleType("pycuda")
pycuda.__path__ = []
pdrv = types.ModuleType("pycuda.driver")


class _DeviceAllocation(int):
    def free(self):
        pass


class _Stream:
    handle = 0

    def synchronize(self):
        pass


pdrv.Stream = _Stream
pdrv.mem_alloc = lambda n: _DeviceAllocation(_malloc(n))
pdrv.pagelocked_empty = lambda shape, dtype: np.empty(shape, dtype)
pdrv.memcpy_htod = lambda d, s: _memmove(d, s, s.nbytes)
pdrv.memcpy_dtoh = lambda d, s: _memmove(d, s, d.nbytes)
pdrv.memcpy_htod_async = lambda d, s, st=None: _memmove(d, s, s.nbytes)
pdrv.memcpy_dtoh_async = lambda d, s, st=None: _memmove(d, s, d.nbytes)
pdrv.init = lambda: None
pautoinit = types.ModuleType("pycuda.autoinit")
pycuda.driver, pycuda.autoinit = pdrv, pautoinit
sys.modules.update({"pycuda": pycuda, "pycuda.driver": pdrv, "pycuda.autoinit": pautoinit})


# ---------------------------------------------------------------- torch 'cuda' -> cpu
def _patch_torch():
    import torch

    def cpu_dev(d):
        if d is None:
            return d
        if isinstance(d, torch.device):
            return torch.device("cpu") if d.type == "cuda" else d
        if isinstance(d, (str, int)) and (isinstance(d, int) or str(d).startswith("cuda")):
            return "cpu"
        return d

    def wrap_factory(f):
        def g(*a, **k):
            if "device" in k:
                k["device"] = cpu_dev(k["device"])
            return f(*a, **k)
        g.__wrapped__ = f
        return g

    for n in ["empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange", "tensor", "as_tensor",
              "empty_like", "zeros_like", "ones_like", "rand_like", "randn_like", "full_like", "linspace",
              "eye", "empty_strided", "randperm"]:
        setattr(torch, n, wrap_factory(getattr(torch, n)))
    orig_to = torch.Tensor.to

    def to(self, *a, **k):
        a = tuple(cpu_dev(x) if isinstance(x, (torch.device, str)) else x for x in a)
        if "device" in k:
            k["device"] = cpu_dev(k["device"])
        return orig_to(self, *a, **k)
    torch.Tensor.to = to
    torch.Tensor.cuda = lambda self, *a, **k: self
    mod_to = torch.nn.Module.to

    def mto(self, *a, **k):
        a = tuple(cpu_dev(x) if isinstance(x, (torch.device, str)) else x for x in a)
        if "device" in k:
            k["device"] = cpu_dev(k["device"])
        return mod_to(self, *a, **k)
    torch.nn.Module.to = mto
    torch.nn.Module.cuda = lambda self, *a, **k: self

    class _TStream:
        cuda_stream = 0

        def synchronize(self):
            pass

        def wait_stream(self, *a):
            pass
    import contextlib
    torch.cuda.ExternalStream = lambda *a, **k: _TStream()
    torch.cuda.stream = lambda *a, **k: contextlib.nullcontext()
    torch.cuda.current_stream = lambda *a, **k: _TStream()
    torch.cuda.default_stream = lambda *a, **k: _TStream()
    torch.cuda.Stream = lambda *a, **k: _TStream()
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.is_available = lambda: True
    torch.cuda.current_device = lambda: 0
    torch.cuda.set_device = lambda *a: None
    torch.cuda.device_count = lambda: 1


# environment (not TensorRT): Pillow 10 removed ANTIALIAS, which TensorRT 8.0's samples use
try:
    from PIL import Image as _Image
    if not hasattr(_Image, "ANTIALIAS"):
        _Image.ANTIALIAS = _Image.LANCZOS
except ImportError:
    pass

if os.environ.get("SHIM_TORCH", "1") == "1":
    try:
        _patch_torch()
    except ImportError:
        pass


# ---------------------------------------------------------------- polygraphy's CUDA wrapper
def _patch_polygraphy():
    from polygraphy.cuda import cuda as pc

    def init(self):
        self.handle = None
    pc.Cuda.__init__ = init
    pc.Cuda.check = lambda self, status: None
    pc.Cuda.create_stream = lambda self: 1
    pc.Cuda.stream_synchronize = lambda self, ptr: None
    pc.Cuda.destroy_stream = lambda self, ptr: None
    pc.Cuda.malloc = lambda self, nbytes: _malloc(nbytes)
    pc.Cuda.free = lambda self, ptr: None
    pc.Cuda.memcpy = lambda self, dst, src, nbytes, kind, stream_ptr=None: _memmove(dst, src, nbytes)


if os.environ.get("SHIM_POLYGRAPHY", "1") == "1":
    try:
        _patch_polygraphy()
    except ImportError:
        pass

# ---------------------------------------------------------------- cupy over host memory
cupy = types.ModuleType("cupy")
cupy.__path__ = []
cupy_cuda = types.ModuleType("cupy.cuda")


class UnownedMemory:
    def __init__(self, ptr, size, owner, device_id=None):
        self.ptr, self.size, self.owner = int(ptr), int(size), owner


class MemoryPointer:
    def __init__(self, mem, offset):
        self.mem, self.ptr = mem, mem.ptr + int(offset)


def _cp_ndarray(shape, dtype=float, memptr=None, strides=None, order="C"):
    if memptr is None:
        return np.empty(shape, dtype)
    dtype = np.dtype(dtype)
    shape = (shape,) if np.isscalar(shape) else tuple(int(s) for s in shape)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = (ctypes.c_byte * max(n, 1)).from_address(memptr.ptr)
    return np.frombuffer(raw, dtype, count=int(np.prod(shape))).reshape(shape)


cupy_cuda.UnownedMemory, cupy_cuda.MemoryPointer = UnownedMemory, MemoryPointer
cupy_cuda.ExternalStream = lambda ptr: types.SimpleNamespace(ptr=ptr, use=lambda: None, __enter__=None)
cupy.cuda, cupy.ndarray, cupy.dtype = cupy_cuda, _cp_ndarray, np.dtype
cupy.asarray = lambda a, *k, **kw: a.numpy() if hasattr(a, "numpy") else np.asarray(a)
cupy.copyto, cupy.reshape = np.copyto, np.reshape
sys.modules.update({"cupy": cupy, "cupy.cuda": cupy_cuda})

if __name__ == "__main__":
    script = os.path.abspath(sys.argv[1])
    sys.argv = [script] + sys.argv[2:]
    sys.path.insert(0, os.path.dirname(script))
    if os.environ.get("SHIM_MODULE"):
        runpy.run_module(os.environ["SHIM_MODULE"], run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(script, run_name="__main__")
