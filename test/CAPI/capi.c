/* Exercises the C API: describe and compile good input, and get the
 * diagnostics of bad input back as text. Prints lines checked by capi.test. */
#include "rpe-c/Compiler.h"

#include <stdio.h>
#include <string.h>

static const char *kGood =
    "func.func @bias(%t: tensor<9x2xf32>, %l: index) -> tensor<2x?x?xf32> {\n"
    "  %0 = rpe.relative_bias %t sizes(%l, %l) by clip<max_distance = 4>"
    " : tensor<9x2xf32> -> tensor<2x?x?xf32>\n"
    "  return %0 : tensor<2x?x?xf32>\n}\n";

static const char *kBad =
    "func.func @bias(%t: tensor<8x2xf32>) -> tensor<2x4x4xf32> {\n"
    "  %0 = rpe.relative_bias %t by clip<max_distance = 4>"
    " : tensor<8x2xf32> -> tensor<2x4x4xf32>\n"
    "  return %0 : tensor<2x4x4xf32>\n}\n";

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  printf("version: %s\n", rpeVersion());
  rpeRegisterAllPasses();
  rpeRegisterAllPasses(); /* idempotent */
  RpeContext *ctx = rpeContextCreate();

  char *json = NULL, *diags = NULL;
  int rc = rpeDescribeModule(ctx, kGood, strlen(kGood), "good.mlir", &json,
                             &diags);
  printf("describe good: %d %s\n", rc, json ? json : "(null)");
  rpeFreeString(json);
  rpeFreeString(diags);

  json = diags = NULL;
  rc = rpeDescribeModule(ctx, "func.func @f(", 13, "trunc.mlir", &json,
                         &diags);
  printf("describe bad: %d json=%s\n%s", rc, json ? "set" : "null",
         diags ? diags : "(no diagnostics)\n");
  rpeFreeString(diags);

  RpeCompileOptions options;
  rpeCompileOptionsInit(&options);
  options.emit = "obj";
  diags = NULL;
  rc = rpeCompile(ctx, kGood, strlen(kGood), "good.mlir", &options, argv[1],
                  NULL, &diags);
  printf("compile good: %d diagnostics=%s\n", rc, diags ? diags : "none");
  rpeFreeString(diags);

  // Verification after every pass (off by default).
  printf("verify_each default: %d\n", options.verify_each);
  options.verify_each = 1;
  diags = NULL;
  rc = rpeCompile(ctx, kGood, strlen(kGood), "good.mlir", &options, argv[1],
                  NULL, &diags);
  printf("compile verify_each: %d diagnostics=%s\n", rc,
         diags ? diags : "none");
  rpeFreeString(diags);
  options.verify_each = 0;

  diags = NULL;
  rc = rpeCompile(ctx, kBad, strlen(kBad), "bad.mlir", &options, argv[1],
                  NULL, &diags);
  printf("compile bad: %d\n%s", rc, diags ? diags : "(no diagnostics)\n");
  rpeFreeString(diags);

  options.target = "nvptx";
  options.chip = "sm_12";
  diags = NULL;
  rc = rpeCompile(ctx, kGood, strlen(kGood), "good.mlir", &options, argv[1],
                  NULL, &diags);
  printf("compile nvptx: %d\n%s", rc, diags ? diags : "(no diagnostics)\n");
  rpeFreeString(diags);

  options.target = "cpu";
  options.chip = "sm_80";
  options.emit = "exe";
  diags = NULL;
  rc = rpeCompile(ctx, kGood, strlen(kGood), "good.mlir", &options, argv[1],
                  NULL, &diags);
  printf("compile exe: %d\n%s", rc, diags ? diags : "(no diagnostics)\n");
  rpeFreeString(diags);

  rpeContextDestroy(ctx);
  return 0;
}
