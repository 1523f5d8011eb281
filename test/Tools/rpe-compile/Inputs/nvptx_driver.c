/* Calls a --target=nvptx module through its generated header: the
 * host-memory variant (copies in and out), the variant on the caller's
 * stream (device pointers), and the errors. Linked with the fake driver
 * (fake_libcuda.c), which runs no kernel: only what the wrappers and the
 * runtime do is checked, not the values. */
#include "nvptx_entry.h"

#include <string.h>

int fake_cuda_launches(void);
int fake_cuda_streams_created(void);
long fake_cuda_live_allocations(void);
size_t fake_cuda_copied_bytes(void);
void *fake_cuda_last_stream(void);

static void report(const char *what, int status, const char *error) {
  printf("%s: status %d%s%s\n", what, status, error[0] ? ": " : "", error);
}

int main(void) {
  float table[10];
  for (int i = 0; i < 10; ++i)
    table[i] = (float)i;
  char error[512] = "";

  /* Host memory in and out. */
  rpe_memref_f32_2d t = {table, table, 0, {5, 2}, {2, 1}};
  rpe_bias_and_alibi_results r;
  memset(&r, 0, sizeof r);
  int status = rpe_bias_and_alibi_host(&r, &t, 1, error, sizeof error);
  report("host", status, error);
  if (status != 0) {
    /* After a kernel fault (FAKE_CUDA_FAULT), the next call fails too. */
    status = rpe_bias_and_alibi_host(&r, &t, 1, error, sizeof error);
    report("again", status, error);
    return 0;
  }
  printf("sizes %lld %lld %lld and %lld %lld %lld\n", (long long)r.r0.sizes[0],
         (long long)r.r0.sizes[1], (long long)r.r0.sizes[2],
         (long long)r.r1.sizes[0], (long long)r.r1.sizes[1],
         (long long)r.r1.sizes[2]);
  /* Host memory from malloc: writable, released with free. */
  r.r0.aligned[23] = 1.0f;
  r.r1.aligned[23] = 1.0f;
  free(r.r0.allocated);
  free(r.r1.allocated);
  /* The table in, both results out (the module may copy more). */
  printf("launched %s, copied in and out %s, live %ld\n",
         fake_cuda_launches() > 0 ? "yes" : "no",
         fake_cuda_copied_bytes() >= sizeof table + 2 * 24 * sizeof(float)
             ? "yes"
             : "no",
         fake_cuda_live_allocations());

  /* Device pointers on the caller's stream. */
  void *dtable = mgpuMemAlloc(sizeof table, NULL, false);
  mgpuMemcpy(dtable, table, sizeof table, NULL);
  rpe_memref_f32_2d dt = {dtable, dtable, 0, {5, 2}, {2, 1}};
  void *stream = &status; /* any handle: the fake driver never uses it */
  int created = fake_cuda_streams_created();
  status = rpe_bias_and_alibi_on_stream(stream, &r, &dt, 1, error,
                                        sizeof error);
  report("on stream", status, error);
  printf("last launch on the %s stream, %d streams created, stream %s\n",
         fake_cuda_last_stream() == stream ? "caller's" : "wrong",
         fake_cuda_streams_created() - created,
         rpeCudaGetStream() == NULL ? "restored" : "left set");
  printf("results live %ld\n", fake_cuda_live_allocations());
  mgpuMemFree(r.r0.allocated, NULL);
  mgpuMemFree(r.r1.allocated, NULL);
  mgpuMemFree(dtable, NULL);
  printf("live %ld\n", fake_cuda_live_allocations());

  /* A table of the wrong size: the shape check's status, nothing leaks. */
  rpe_memref_f32_2d bad = {table, table, 0, {4, 2}, {2, 1}};
  rpe_memref_f32_3d out;
  status = rpe_bias_host(&out, &bad, 3, error, sizeof error);
  report("bad table", status, error);
  printf("live %ld\n", fake_cuda_live_allocations());

  /* A result that aliases its argument's device copy: the values come back
   * (no kernel runs: only copies), and the buffer is freed once. */
  rpe_memref_f32_2d same;
  status = rpe_identity_host(&same, &t, error, sizeof error);
  report("identity", status, error);
  int equal = status == 0 && same.aligned != table;
  for (int i = 0; equal && i < 10; ++i)
    equal = same.aligned[i] == table[i];
  printf("values %s, live %ld\n", equal ? "copied back" : "WRONG",
         fake_cuda_live_allocations());
  if (status == 0)
    free(same.allocated);
  return 0;
}
