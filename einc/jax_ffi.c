/* einc's XLA FFI handlers: hand the buffers of one custom call to a Python callback.
 *
 * XLA calls einc_ffi_cpu / einc_ffi_cuda with a call frame. The handler reads the
 * operands' and the result's data pointers, ranks, dimensions and dtypes, the int64
 * attribute "key" (which names the einsum in einc.jax_ffi's table), and on CUDA the
 * platform stream (a CUstream) and the device ordinal, and calls the function that
 * Python registered with einc_set_callback. A ctypes callback takes the GIL itself; XLA
 * runs the handler with the GIL released. The callback returns 0, or non-zero with a
 * message in `err`, which becomes the XLA error the jitted call raises.
 *
 * Built by einc/jax_ffi.py with the C compiler against jax.ffi.include_dir()'s
 * headers, so the reported API version is the installed jaxlib's own. The handlers
 * declare no traits: XLA never records them into a command buffer (CUDA graph), so
 * einc may allocate and choose kernels per call.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "xla/ffi/api/c_api.h"

#define EINC_MAX_BUFFERS 256
#define EINC_MAX_DIMS 4096

typedef int (*einc_callback)(int64_t key, int64_t n, void **ptrs, const int64_t *ranks,
                             const int64_t *dims, const int32_t *dtypes, void *stream,
                             int32_t device, char *err, int64_t errlen);

static einc_callback callbacks[2]; /* 0: cpu, 1: cuda */

void einc_set_callback(int which, einc_callback cb) {
  if (which == 0 || which == 1) callbacks[which] = cb;
}

static XLA_FFI_Error *fail(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *msg) {
  XLA_FFI_Error_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  a.message = msg;
  a.errc = code;
  return api->XLA_FFI_Error_Create(&a);
}

/* XLA asks a handler for its API version and traits with a metadata extension. */
static XLA_FFI_Error *metadata(XLA_FFI_CallFrame *frame) {
  XLA_FFI_Metadata_Extension *ext = (XLA_FFI_Metadata_Extension *)frame->extension_start;
  ext->metadata->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  ext->metadata->api_version.extension_start = NULL;
  ext->metadata->api_version.major_version = XLA_FFI_API_MAJOR;
  ext->metadata->api_version.minor_version = XLA_FFI_API_MINOR;
  ext->metadata->traits = 0;
  return NULL;
}

static int find_key(const XLA_FFI_Attrs *attrs, int64_t *key) {
  for (int64_t i = 0; i < attrs->size; i++) {
    const XLA_FFI_ByteSpan *name = attrs->names[i];
    if (name->len == 3 && memcmp(name->ptr, "key", 3) == 0 &&
        attrs->types[i] == XLA_FFI_AttrType_SCALAR) {
      const XLA_FFI_Scalar *s = (const XLA_FFI_Scalar *)attrs->attrs[i];
      if (s->dtype != XLA_FFI_DataType_S64) return 0;
      *key = *(const int64_t *)s->value;
      return 1;
    }
  }
  return 0;
}

static int add_buffer(const XLA_FFI_Buffer *b, int64_t i, void **ptrs, int64_t *ranks,
                      int32_t *dtypes, int64_t *dims, int64_t *ndims) {
  if (*ndims + b->rank > EINC_MAX_DIMS) return 0;
  ptrs[i] = b->data;
  ranks[i] = b->rank;
  dtypes[i] = (int32_t)b->dtype;
  memcpy(dims + *ndims, b->dims, (size_t)b->rank * sizeof(int64_t));
  *ndims += b->rank;
  return 1;
}

static XLA_FFI_Error *run(XLA_FFI_CallFrame *frame, int which) {
  const XLA_FFI_Api *api = frame->api;
  if (frame->extension_start != NULL && frame->extension_start->type == XLA_FFI_Extension_Metadata)
    return metadata(frame);
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return fail(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "einc: called outside the execute stage");
  if (callbacks[which] == NULL)
    return fail(api, XLA_FFI_Error_Code_FAILED_PRECONDITION, "einc: no Python callback registered");
  int64_t key;
  if (!find_key(&frame->attrs, &key))
    return fail(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "einc: the call has no int64 attribute 'key'");
  int64_t nargs = frame->args.size, n = nargs + frame->rets.size;
  if (frame->rets.size != 1 || n > EINC_MAX_BUFFERS)
    return fail(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "einc: expected one result and at most 255 operands");
  void *ptrs[EINC_MAX_BUFFERS];
  int64_t ranks[EINC_MAX_BUFFERS], dims[EINC_MAX_DIMS], ndims = 0;
  int32_t dtypes[EINC_MAX_BUFFERS];
  for (int64_t i = 0; i < n; i++) {
    int is_arg = i < nargs;
    int ok = is_arg ? frame->args.types[i] == XLA_FFI_ArgType_BUFFER
                    : frame->rets.types[i - nargs] == XLA_FFI_RetType_BUFFER;
    const XLA_FFI_Buffer *b = (const XLA_FFI_Buffer *)(is_arg ? frame->args.args[i] : frame->rets.rets[i - nargs]);
    if (!ok || !add_buffer(b, i, ptrs, ranks, dtypes, dims, &ndims))
      return fail(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "einc: an operand is not a buffer or has too many dims");
  }
  void *stream = NULL;
  int32_t device = -1;
  if (which == 1) {
    XLA_FFI_Stream_Get_Args s;
    memset(&s, 0, sizeof s);
    s.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
    s.ctx = frame->ctx;
    XLA_FFI_Error *e = api->XLA_FFI_Stream_Get(&s);
    if (e != NULL) return e;
    stream = s.stream;
    if (api->struct_size >= XLA_FFI_Api_STRUCT_SIZE && api->XLA_FFI_DeviceOrdinal_Get != NULL) {
      XLA_FFI_DeviceOrdinal_Get_Args d;
      memset(&d, 0, sizeof d);
      d.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE;
      d.ctx = frame->ctx;
      e = api->XLA_FFI_DeviceOrdinal_Get(&d);
      if (e == NULL) {
        device = d.device_ordinal;
      } else {
        XLA_FFI_Error_Destroy_Args x;
        memset(&x, 0, sizeof x);
        x.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
        x.error = e;
        api->XLA_FFI_Error_Destroy(&x);
      }
    }
  }
  char err[2048];
  err[0] = 0;
  if (callbacks[which](key, n, ptrs, ranks, dims, dtypes, stream, device, err, sizeof err) != 0) {
    err[sizeof err - 1] = 0;
    return fail(api, XLA_FFI_Error_Code_INTERNAL, err[0] ? err : "einc: the einsum failed");
  }
  return NULL;
}

XLA_FFI_Error *einc_ffi_cpu(XLA_FFI_CallFrame *frame) { return run(frame, 0); }
XLA_FFI_Error *einc_ffi_cuda(XLA_FFI_CallFrame *frame) { return run(frame, 1); }
