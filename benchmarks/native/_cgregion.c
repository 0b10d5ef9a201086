/* _cgregion: count the instructions of one call under callgrind. run(callable) switches
   callgrind's instrumentation on around the call, so only the call is counted:
   valgrind --tool=callgrind --instr-atstart=no python ... (benchmarks/native/bench.py
   --callgrind). Outside valgrind (or without its headers) it just calls. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif

static PyObject *run(PyObject *module, PyObject *callable) {
    (void)module;
#ifdef HAVE_CALLGRIND
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
#endif
    PyObject *result = PyObject_CallNoArgs(callable);
#ifdef HAVE_CALLGRIND
    CALLGRIND_DUMP_STATS_AT("region");
    CALLGRIND_STOP_INSTRUMENTATION;
#endif
    return result;
}

static PyObject *available(PyObject *module, PyObject *Py_UNUSED(ignored)) {
    (void)module;
#ifdef HAVE_CALLGRIND
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

static PyMethodDef methods[] = {
    {"run", run, METH_O, "Call the callable with callgrind counting only it."},
    {"available", available, METH_NOARGS, "Built with callgrind's client requests."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_cgregion", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cgregion(void) { return PyModule_Create(&moduledef); }
