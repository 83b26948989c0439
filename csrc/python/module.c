/* module.c -- trtlite._C: multi-phase init, the module state's lifetime, module functions. */
#include "python/state.h"
#include "python/errors.h"
#include "python/sink.h"
#include "python/py_network.h"
#include "python/py_layer.h"
#include "python/py_tensor.h"
#include "python/py_builder.h"
#include "python/py_engine.h"
#include "python/py_context.h"
#include "python/py_plugin.h"
#include "python/py_refit.h"
#include "python/py_timing_cache.h"

trtl_py_state *trtl_py_state_of_type(PyTypeObject *tp)
{
    PyObject *m = PyType_GetModuleByDef(tp, &trtl_py_module_def);
    if (!m) {
        PyErr_Clear();
        return NULL;
    }
    return (trtl_py_state *)PyModule_GetState(m);
}

/* ---- module functions ---------------------------------------------------------------------- */

static PyObject *mod_register(PyObject *m, PyObject *args)
{
    PyObject *enums, *dims_cls;
    if (!PyArg_ParseTuple(args, "O!O", &PyDict_Type, &enums, &dims_cls))
        return NULL;
    trtl_py_state *st = PyModule_GetState(m);
    Py_INCREF(enums);
    Py_XSETREF(st->enums, enums);
    Py_INCREF(dims_cls);
    Py_XSETREF(st->dims_cls, dims_cls);
    Py_RETURN_NONE;
}

/* The names of the TRTL_CPU_* bits set in f, as a list. */
static PyObject *feature_names(uint32_t f)
{
    static const struct { uint32_t bit; const char *name; } names[] = {
        {TRTL_CPU_SSE41, "sse4.1"}, {TRTL_CPU_AVX, "avx"}, {TRTL_CPU_AVX2, "avx2"}, {TRTL_CPU_FMA, "fma"},
        {TRTL_CPU_F16C, "f16c"}, {TRTL_CPU_AVX512F, "avx512f"}, {TRTL_CPU_AVX512BW, "avx512bw"},
        {TRTL_CPU_AVX512VNNI, "avx512vnni"}, {TRTL_CPU_AVX512BF16, "avx512bf16"}, {TRTL_CPU_AVXVNNI, "avxvnni"},
        {TRTL_CPU_AMX_TILE, "amx_tile"}, {TRTL_CPU_AMX_BF16, "amx_bf16"}, {TRTL_CPU_AMX_INT8, "amx_int8"}};
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < sizeof names / sizeof names[0]; i++)
        if (f & names[i].bit) {
            PyObject *s = PyUnicode_FromString(names[i].name);
            if (!s || PyList_Append(l, s) < 0) {
                Py_XDECREF(s);
                Py_DECREF(l);
                return NULL;
            }
            Py_DECREF(s);
        }
    return l;
}

static PyObject *mod_cpu_features(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return feature_names(trtl_cpu_features());
}

static const char *const op_display[TRTL_OP_COUNT] = {
#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no) disp,
#include "trtlite/ops.def"
#undef TRTL_OP
};

static PyObject *mod_kernels(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    int32_t n = trtl_kernel_count();
    uint32_t have = trtl_cpu_features();
    PyObject *l = PyList_New(n);
    for (int32_t i = 0; l && i < n; i++) {
        const char *name;
        trtl_op op;
        uint32_t need;
        if (trtl_kernel_info(i, &name, &op, &need) != TRTL_OK) {
            Py_DECREF(l);
            return PyErr_Format(PyExc_RuntimeError, "kernel %d: %s", (int)i, trtl_last_error());
        }
        PyObject *feats = feature_names(need);
        PyObject *t = feats ? Py_BuildValue("(ssNO)", name, (int)op < TRTL_OP_COUNT ? op_display[op] : "?", feats,
                                            (have & need) == need ? Py_True : Py_False)
                            : NULL;
        if (!t) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, t);
    }
    return l;
}

static PyMethodDef module_methods[] = {
    {"_register", mod_register, METH_VARARGS,
     "_register(enums: dict, dims_cls) -> None\n\nInstall the Python enum classes and the Dims class used for return values."},
    {"cpu_features", mod_cpu_features, METH_NOARGS,
     "cpu_features() -> list[str]\n\nCPU features detected at run time (kernels are chosen by them)."},
    {"kernels", mod_kernels, METH_NOARGS,
     "kernels() -> list[tuple[str, str, list[str], bool]]\n\nThe optimized kernels of this build: (name, layer kind, "
     "CPU features it needs, whether this machine has them).  Every layer kind also has a reference kernel."},
    {NULL, NULL, 0, NULL}};

/* ---- init ---------------------------------------------------------------------------------- */

static int module_exec(PyObject *m)
{
    trtl_py_state *st = PyModule_GetState(m);
    st->module = m;
    st->enums = PyDict_New();
    if (!st->enums)
        return -1;
    if (trtl_py_init_errors(m, st) < 0 || trtl_py_init_tensor(m, st) < 0 || trtl_py_init_layers(m, st) < 0 ||
        trtl_py_init_network(m, st) < 0 || trtl_py_init_builder(m, st) < 0 || trtl_py_init_engine(m, st) < 0 ||
        trtl_py_init_context(m, st) < 0 || trtl_py_init_plugins(m, st) < 0 || trtl_py_init_timing_cache(m, st) < 0 ||
        trtl_py_init_refit(m, st) < 0)
        return -1;
    if (PyModule_AddStringConstant(m, "__version__", trtl_version()) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    trtl_py_state *st = PyModule_GetState(m);
    if (!st)
        return 0;
    Py_VISIT(st->Error);
    Py_VISIT(st->ShapeError);
    Py_VISIT(st->InvalidArgumentError);
    Py_VISIT(st->DTypeError);
    Py_VISIT(st->NotFoundError);
    Py_VISIT(st->UnsupportedError);
    Py_VISIT(st->PlanError);
    Py_VISIT(st->PluginError);
    Py_VISIT(st->StateError);
    Py_VISIT(st->OutOfMemoryError);
    Py_VISIT(st->PluginFieldError);
    Py_VISIT(st->NetworkType);
    Py_VISIT(st->LayerType);
    Py_VISIT(st->TensorType);
    Py_VISIT(st->BuilderType);
    Py_VISIT(st->ConfigType);
    Py_VISIT(st->ProfileType);
    Py_VISIT(st->RuntimeType);
    Py_VISIT(st->EngineType);
    Py_VISIT(st->ContextType);
    Py_VISIT(st->HostMemoryType);
    Py_VISIT(st->InspectorType);
    Py_VISIT(st->TimingCacheType);
    for (int i = 0; i < TRTL_OP_COUNT; i++)
        Py_VISIT(st->layer_types[i]);
    Py_VISIT(st->enums);
    Py_VISIT(st->dims_cls);
    Py_VISIT(st->plugin_hooks);
    if (st->log_sink)
        Py_VISIT(st->log_sink->logger);
    return 0;
}

static int module_clear(PyObject *m)
{
    trtl_py_state *st = PyModule_GetState(m);
    if (!st)
        return 0;
    Py_CLEAR(st->Error);
    Py_CLEAR(st->ShapeError);
    Py_CLEAR(st->InvalidArgumentError);
    Py_CLEAR(st->DTypeError);
    Py_CLEAR(st->NotFoundError);
    Py_CLEAR(st->UnsupportedError);
    Py_CLEAR(st->PlanError);
    Py_CLEAR(st->PluginError);
    Py_CLEAR(st->StateError);
    Py_CLEAR(st->OutOfMemoryError);
    Py_CLEAR(st->PluginFieldError);
    Py_CLEAR(st->NetworkType);
    Py_CLEAR(st->LayerType);
    Py_CLEAR(st->TensorType);
    Py_CLEAR(st->BuilderType);
    Py_CLEAR(st->ConfigType);
    Py_CLEAR(st->ProfileType);
    Py_CLEAR(st->RuntimeType);
    Py_CLEAR(st->EngineType);
    Py_CLEAR(st->ContextType);
    Py_CLEAR(st->HostMemoryType);
    Py_CLEAR(st->InspectorType);
    Py_CLEAR(st->TimingCacheType);
    for (int i = 0; i < TRTL_OP_COUNT; i++)
        Py_CLEAR(st->layer_types[i]);
    Py_CLEAR(st->enums);
    Py_CLEAR(st->dims_cls);
    Py_CLEAR(st->plugin_hooks);
    if (st->log_sink) {
        trtl_set_log_callback(NULL, NULL);
        Py_CLEAR(st->log_sink->logger);
        Py_CLEAR(st->log_sink->exc);
        PyMem_RawFree(st->log_sink);
        st->log_sink = NULL;
    }
    return 0;
}

/* After every type of the module is gone (each holds a reference to the module). */
static void module_free(void *m)
{
    module_clear((PyObject *)m);
    trtl_py_state *st = PyModule_GetState((PyObject *)m);
    if (!st)
        return;
    PyMem_Free(st->layer_getsets);
    PyMem_Free(st->network_methods);
    st->layer_getsets = NULL;
    st->network_methods = NULL;
}

/* Not for subinterpreters (Python >= 3.12 refuses the import there): the C library's plugin
 * registry and its log sink are process-wide and would hand one interpreter's Python creators and
 * logger to another, and callbacks from C take the GIL with PyGILState_Ensure, which knows only
 * the main interpreter.  Several instances of the module in one interpreter are fine: everything
 * else lives in the module state. */
static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
    {0, NULL}};

PyModuleDef trtl_py_module_def = {
    PyModuleDef_HEAD_INIT,
    "trtlite._C",
    "trtlite's C core: network definition, builder, engine and execution context.",
    sizeof(trtl_py_state),
    module_methods,
    module_slots,
    module_traverse,
    module_clear,
    module_free};

PyMODINIT_FUNC PyInit__C(void) { return PyModuleDef_Init(&trtl_py_module_def); }
