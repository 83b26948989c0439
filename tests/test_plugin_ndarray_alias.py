"""`trtp.register` attribute annotations written with numpy >= 2.5's NDArray, which is a PEP 695 type alias
(``type NDArray[T] = ndarray[tuple[Any, ...], dtype[T]]``): ``NDArray[np.int32]`` then has the alias, not
``np.ndarray``, as its origin.  The alias is rebuilt here with typing_extensions.TypeAliasType so that the check runs on
any numpy; the plugin's output is compared with numpy."""
from typing import Any, Tuple, TypeVar

import numpy as np
import pytest

import trtlite as trt
import trtlite.plugin as trtp

typing_extensions = pytest.importorskip("typing_extensions")
T = TypeVar("T", bound=np.generic)
NDArray25 = typing_extensions.TypeAliasType("NDArray25", np.ndarray[Tuple[Any, ...], np.dtype[T]], type_params=(T,))
Shift = typing_extensions.TypeAliasType("Shift", list[T], type_params=(T,))  # an alias of something else
LOG = trt.Logger(trt.Logger.ERROR)


@trtp.register("trtlalias::add_rows")
def _add_rows_desc(inp0: trtp.TensorDesc, rows: NDArray25[np.float32]) -> trtp.TensorDesc:
    return inp0.like()


@trtp.impl("trtlalias::add_rows")
def _add_rows_impl(inp0: trtp.Tensor, rows: NDArray25[np.float32], outputs: Tuple[trtp.Tensor], stream: int) -> None:
    np.asarray(outputs[0])[...] = np.asarray(inp0) + rows.reshape(-1, 1)


def test_alias_ndarray_attribute_is_a_float32_array_field():
    b = trt.Builder(LOG)
    n = b.create_network(0)
    x = n.add_input("x", trt.float32, (3, 4))
    rows = np.array([1.5, -2.0, 4.25], np.float64)  # cast to the annotated float32, as for npt.NDArray
    layer = n.add_plugin(trtp.op.trtlalias.add_rows(x, rows=rows))
    layer.get_output(0).name = "y"
    n.mark_output(layer.get_output(0))
    plan = b.build_serialized_network(n, b.create_builder_config())
    xv = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    got = trt.Runtime(LOG).deserialize_cuda_engine(plan).create_execution_context().infer({"x": xv})["y"]
    np.testing.assert_allclose(got, xv.astype(np.float64) + rows[:, None], rtol=1e-6)


def test_alias_of_something_else_is_refused_with_the_attribute_named():
    with pytest.raises(TypeError, match="attribute 'k' has annotation"):
        @trtp.register("trtlalias::bad")
        def _bad(inp0: trtp.TensorDesc, k: Shift[np.int32]) -> trtp.TensorDesc:
            return inp0.like()
