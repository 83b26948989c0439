/* plugin_types.h -- the _C.PluginV2 and _C.PluginCreator types (plugin_types.c). */
#ifndef TRTL_PYTHON_PLUGIN_TYPES_H
#define TRTL_PYTHON_PLUGIN_TYPES_H

#include "python/plugin_fields.h"

typedef struct TrtlCreatorObj {
    PyObject_HEAD
    const trtl_plugin_creator *c;
} TrtlCreatorObj;

typedef struct TrtlPluginObj {
    PyObject_HEAD
    trtl_plugin *p;
    char name[64]; /* given to create_plugin / deserialize_plugin; layer messages name it */
} TrtlPluginObj;

/* Creates both types into the module (and the state's plugin_hooks). */
int trtl_py_init_plugin_types(PyObject *m, trtl_py_state *st);
PyTypeObject *trtl_py_creator_type(trtl_py_state *st);
PyTypeObject *trtl_py_plugin_type(trtl_py_state *st);
/* A _C.PluginV2 owning `p` (destroyed on failure). */
PyObject *trtl_py_plugin_obj_new(trtl_py_state *st, trtl_plugin *p, const char *name);
/* The _C.PluginCreator standing for a registered creator. */
PyObject *trtl_py_creator_to_py(trtl_py_state *st, const trtl_plugin_creator *c);

#endif
