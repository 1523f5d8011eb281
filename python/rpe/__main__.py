"""``python -m rpe``: command-line tools of the rpe package.

    python -m rpe plot bias      --scheme t5 --num-buckets 32 --max-distance 128 \\
                                 --length 64 --heads 4 --seed 0 -o bias.png
    python -m rpe plot attention --scheme clip --max-distance 5 --length 32 -o att.png
    python -m rpe plot curve     --scheme log --position-buckets 32 \\
                                 --max-relative-positions 64 -o curve.png

    python -m rpe import-torch mypkg.models:make_model -o model.mlir

``python -m rpe plot KIND --help`` lists every option. Bad arguments exit
with status 2 and a one-line message (argparse), runtime failures (e.g. no
matplotlib, librpe-c.so not built for ``--compiled``) with status 1.
"""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m rpe",
        description="rpe command-line tools: relative position encodings as compiler ops.")
    commands = parser.add_subparsers(dest="command", metavar="{plot,import-torch}")
    commands.required = True
    from . import plot, torch_import
    plot.add_cli(commands)
    torch_import.add_cli(commands)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
