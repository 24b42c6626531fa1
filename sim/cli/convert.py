"""``schedsearch convert IN OUT``: a workload from one of the field's formats to another.

``IN`` is anything ``simulate`` reads (SWF, ``.kswf``, a Batsim JSON workload, a bundled
trace name), with the same cleaning options. ``OUT`` is chosen by the end of its name
(``WRITERS``): ``.json`` a Batsim JSON workload of delay profiles
(``instances.batsim.write_batsim_workload``; a Batsim input keeps its ids and profile
names), ``.swf`` or ``.swf.gz`` SWF, ``.kswf`` the K-resource format; any other name is
refused before reading. ``OUT`` read back gives the jobs that were written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from sim.cli.common import Fmt, dump, procs_arg

#: workload writers by the end of the output's name
WRITERS: dict[str, str] = {".json": "batsim", ".swf": "swf", ".swf.gz": "swf",
                           ".kswf": "kswf"}


def writer_format(out: str) -> str:
    """``"batsim"``, ``"swf"`` or ``"kswf"`` by the end of ``out``; ValueError else."""
    name = out.lower()
    for ext, fmt in WRITERS.items():
        if name.endswith(ext):
            return fmt
    raise ValueError(f"{out}: unknown output format; a workload is written as "
                     f"{', '.join(WRITERS)} (Batsim JSON, SWF, K-resource SWF)")


def cmd_convert(args: argparse.Namespace) -> int:
    from sim.batch.runner import load_workload

    fmt = writer_format(args.out)
    dst = Path(args.out)
    if not dst.parent.is_dir():
        raise ValueError(f"{args.out}: directory {dst.parent} does not exist")
    src = Path(args.trace)
    if dst.exists() and (dst.is_dir() or (src.exists() and os.path.samefile(dst, src))):
        raise ValueError(f"{args.out}: refusing to overwrite "
                         f"{'a directory' if dst.is_dir() else 'the input'}")
    w = load_workload(args.trace, procs=args.procs, perfect_estimates=args.perfect_estimates,
                      wide=args.wide)
    if fmt != "kswf" and w.K > 1:
        raise ValueError(f"{args.out}: {w.name} has K = {w.K} resources; only .kswf holds "
                         f"them")
    if not args.quiet and w.cleaning is not None:
        print(w.cleaning.summary(), file=sys.stderr)
    _write(fmt, args.out, w)
    info: dict[str, Any] = {"in": str(args.trace), "out": args.out, "format": fmt,
                            "jobs": len(w), "capacity": list(w.capacity)}
    print(dump(info))
    return 0


def _write(fmt: str, out: str, w: Any) -> None:
    if fmt == "batsim":
        from instances.batsim import write_batsim_workload

        write_batsim_workload(out, w)
    elif fmt == "swf":
        from instances.swf import write_swf

        write_swf(out, w)
    else:
        from instances.kresource import write_kswf

        write_kswf(out, w)


def add_convert(sub: Any) -> None:
    """Register ``convert`` on the ``schedsearch`` parser."""
    p = sub.add_parser("convert", help="a workload from one format to another (SWF, .kswf, "
                                       "Batsim JSON), by the output's name",
                       formatter_class=Fmt)
    p.add_argument("trace", help="SWF, .kswf or Batsim JSON file, or a bundled trace name")
    p.add_argument("out", help="output: .json (Batsim), .swf, .swf.gz or .kswf")
    p.add_argument("--procs", type=procs_arg, metavar="N|from-jobs",
                   help="machine size in processors (overrides the file's)")
    p.add_argument("--wide", choices=("error", "drop", "clip"), default="error",
                   help="a job wider than the machine: error, drop or clip")
    p.add_argument("--perfect-estimates", action="store_true",
                   help="requested time := actual runtime for every job")
    p.add_argument("--quiet", action="store_true", help="no cleaning report")
    p.set_defaults(func=cmd_convert)
