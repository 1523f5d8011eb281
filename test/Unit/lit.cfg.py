# -*- Python -*-
# lit configuration for rpe's GoogleTest unit tests.

import os

import lit.formats

config.name = "RPE-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.rpe_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
