"""The issue's plugin examples: l2_normalize from L2Norm_Helper_TRT, and plugin libraries whose ABI
version does not match."""
import os
import subprocess
import sys

import numpy as np
import pytest

import trtlite as trt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples", "plugins"))
from l2_normalize import l2_normalize  # noqa: E402


@pytest.mark.parametrize("shape,axes,eps", [((3, 7), 1 << 1, 1e-12), ((2, 4, 5, 3), (1 << 1) | (1 << 2), 1e-12),
                                            ((2, 5), 1 << 1, 4.0)])
def test_l2_normalize_matches_numpy(shape, axes, eps):
    trt.init_libnvinfer_plugins(trt.Logger(trt.Logger.ERROR), "")
    builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = network.add_input("x", trt.float32, shape)
    y = l2_normalize(network, x, axes, eps)
    y.name = "y"
    network.mark_output(y)
    plan = builder.build_serialized_network(network, builder.create_builder_config())
    engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(plan)
    data = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    if eps > 1:
        data *= 0.3  # make max(sum, eps) pick eps for some rows
    out = engine.create_execution_context().infer({"x": data})["y"]
    ax = tuple(i for i in range(len(shape)) if axes >> i & 1)
    x64 = data.astype(np.float64)
    want = x64 / np.sqrt(np.maximum((x64 * x64).sum(axis=ax, keepdims=True), eps))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


LIB_SRC = r"""
#include "trtlite/plugin.h"
static trtl_plugin *create(const trtl_plugin_creator *s, const char *n, const trtl_plugin_fields *f, char *m, size_t l)
{ (void)s; (void)n; (void)f; (void)m; (void)l; return 0; }
static const trtl_plugin_creator creator = {sizeof(trtl_plugin_creator), ABI, "AbiTest_EXAMPLE", "1", "", 0, 0, create, 0};
static const trtl_plugin_creator *const list[] = {&creator};
const trtl_plugin_creator *const *trtl_get_plugin_creators(int32_t *count, uint32_t *abi_version)
{ *count = 1; *abi_version = LIB_ABI; return list; }
"""


@pytest.mark.parametrize("lib_abi,creator_abi", [(99, 1), (1, 99)])
def test_library_with_another_abi_version_is_refused(tmp_path, lib_abi, creator_abi):
    src = tmp_path / "abi.c"
    src.write_text(LIB_SRC)
    lib = tmp_path / "libabi.so"
    subprocess.run(["gcc", "-std=c11", "-shared", "-fPIC", f"-I{ROOT}/csrc/include", f"-DABI={creator_abi}",
                    f"-DLIB_ABI={lib_abi}", str(src), "-o", str(lib)], check=True)
    with pytest.raises(trt.PluginError, match="ABI version 99.*supports version 1"):
        trt.get_plugin_registry().load_library(str(lib))
    assert trt.get_plugin_registry().get_plugin_creator("AbiTest_EXAMPLE", "1", "") is None
