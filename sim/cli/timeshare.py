"""``schedsearch csm`` and ``bsp``: one experiment point of the time-sharing cluster
(Giné et al.'s CSM; Karl's BSP programs under scheduling servers, times in µs)."""

from __future__ import annotations

import argparse
from typing import Any

from sim.cli.common import dump, field_default, param_default, plain_float, plain_int


def cmd_csm(args: argparse.Namespace) -> int:
    """One CSM experiment point (time-sharing cluster) for one or more policies."""
    from heuristics.coscheduling import MODES, READS, by_name, reads
    from sim.timeshare.csm import run_point
    from sim.timeshare.workload import CSMConfig

    cfg = CSMConfig(n_nodes=args.nodes, mem_pages=args.mem_pages, mem_load=args.mem_load,
                    pdt=args.pdt, n_jobs=args.jobs, mfreq_ms=args.mfreq,
                    class_mix=args.class_mix, tc_scale=args.scale, mem_scale=args.scale,
                    pgfault_formula=args.pgfault, msg_model=args.msg_model,
                    fault_service=args.fault_service,
                    refs_per_dispatch=args.refs_per_dispatch,
                    large_sizes=tuple(s for s in (8, 16, 32) if s <= args.nodes) or (1,))
    names = [p.strip() for p in args.policies.split(",") if p.strip()]
    for n in names:
        reads(n)  # an unknown policy is refused before anything runs
    read = frozenset().union(*map(reads, names))
    unread = [o for o in ("mnol", "mnod", "p") if getattr(args, o) is not None
              and o not in read]
    if unread:  # an option no policy of the run reads would be recorded as if it acted
        who = "; ".join(f"{o}: {', '.join(m for m in MODES if o in READS[m])}"
                        for o in unread)
        raise ValueError(f"--{', --'.join(unread)}: no policy of --policies "
                         f"{','.join(names)} reads {'them' if len(unread) > 1 else 'it'} "
                         f"(read by {who})")
    algorithm = {o: getattr(args, o) for o in ("mnol", "mnod", "p")
                 if getattr(args, o) is not None}
    rows = []
    for name in names:
        pol = by_name(name, quantum_us=int(cfg.quantum_ms * 1000), **algorithm)
        r = run_point(cfg, pol, args.seed, log=args.check)
        row = {"policy": name, **r.metrics, "events": r.events, "wall_s": r.wall_s}
        if args.check:
            from sim.timeshare.check import check

            row["checked"] = check(r.cluster.log.records)
        rows.append(row)
    if args.json:
        print(dump({"config": cfg.to_dict(), "seed": args.seed, "rows": rows}))
        return 0
    keys = ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large",
            "slowdown_local", "tasks_per_node", "events", "wall_s")
    print("policy  " + "  ".join(f"{k:>14}" for k in keys))
    for r in rows:
        print(f"{r['policy']:7s} " + "  ".join(
            f"{r[k]:14.3f}" if isinstance(r[k], float) else f"{r[k]:>14}" for k in keys))
    return 0


def cmd_bsp(args: argparse.Namespace) -> int:
    """One (g, v) cell of the BSP model under scheduling servers (times in µs)."""
    from sim.timeshare.bsp import BSPParams, NetParams, measure_cell
    from sim.timeshare.servers import ServerParams, SlotSchedule

    given = [f"--{o.replace('_', '-')}" for o in SERVER_OPTIONS if getattr(args, o) is not None]
    if args.regime == "none" and given:  # no server: no slot table, no controlled class
        raise ValueError(f"{', '.join(given)}: the scheduling servers' option(s), and "
                         f"--regime none runs no server")
    for o, default in _server_defaults().items():
        if getattr(args, o) is None:
            setattr(args, o, default)
    sch = SlotSchedule.for_share(args.share, round_us=args.round_us, slot_us=args.slot_us,
                                 place=args.placement)
    bsp = BSPParams(g_us=args.g_us, v=args.v, n=args.n, pattern=args.pattern,
                    spin_us=args.spin_us)
    sp = ServerParams(regime=args.regime, ctl_block_wakeup=args.wakeup)
    net = NetParams(latency_us=args.latency_us)
    cell = measure_cell(bsp, sch, sp, net, i=args.i, seed=args.seed)
    out = {"bsp": bsp.to_dict(), "server": sp.to_dict(), "share": args.share,
           "owner": list(sch.owner), "slot_us": sch.slot_us, "latency_us": args.latency_us,
           "seed": args.seed, **{k: cell[k] for k in ("mean_us", "std_us", "cv", "i",
                                                      "events", "times_us")}}
    if args.json:
        print(dump(out))
    else:
        print(f"{args.regime}, wake-up {args.wakeup}: mean {cell['mean_us'] / 1000:.3f} ms, "
              f"std {cell['std_us'] / 1000:.3f} ms, CV {cell['cv']:.3f} over i = {args.i} "
              f"measurements of n = {args.n} supersteps ({cell['events']} events)")
    return 0


#: bsp's options that act through the scheduling servers only (refused with regime none)
SERVER_OPTIONS = ("share", "round_us", "slot_us", "placement", "wakeup")


def _server_defaults() -> dict[str, Any]:
    """The defaults of :data:`SERVER_OPTIONS`: the slot table's and the servers' own."""
    from sim.timeshare.servers import ServerParams, SlotSchedule

    share = SlotSchedule.for_share
    return {"share": param_default(share, "share"), "round_us": param_default(share, "round_us"),
            "slot_us": param_default(share, "slot_us"), "placement": param_default(share, "place"),
            "wakeup": field_default(ServerParams, "ctl_block_wakeup")}


def add_csm(sub: Any) -> None:
    """Register ``csm`` on the ``schedsearch`` parser."""
    from heuristics.coscheduling import POLICY_NAMES, Coscheduling
    from sim.timeshare.workload import CSMConfig

    def cfg(name: str) -> Any:
        return field_default(CSMConfig, name)

    p = sub.add_parser("csm", help="time-sharing cluster: one CSM experiment point")
    p.add_argument("--policies", default="rr,pred,dyn,csm",
                   help="comma-separated: " + ", ".join(POLICY_NAMES))
    p.add_argument("--nodes", type=plain_int, default=cfg("n_nodes"))
    p.add_argument("--mem-pages", type=plain_int, default=cfg("mem_pages"),
                   help="M, pages per node")
    p.add_argument("--mem-load", type=plain_float, default=cfg("mem_load"))
    p.add_argument("--pdt", type=plain_float, default=cfg("pdt"))
    p.add_argument("--jobs", type=plain_int, default=cfg("n_jobs"))
    p.add_argument("--mfreq", type=plain_float, default=cfg("mfreq_ms"),
                   help="ms of CPU between messages")
    p.add_argument("--class-mix", default=cfg("class_mix"),
                   help="AMB-4.7: a (two streams) or b")
    # the command's own default: 1/100 of the paper's times and memory, a quick point
    p.add_argument("--scale", type=plain_float, default=0.01, help="tc and memory scale")
    p.add_argument("--pgfault", default=cfg("pgfault_formula"),
                   help="eq. 3: corrected or literal")
    p.add_argument("--msg-model", default=cfg("msg_model"),
                   help="AMB-4.10: pairwise, exchange, ring, async or probe")
    p.add_argument("--fault-service", default=cfg("fault_service"),
                   help="AMB-4.11: parallel or fifo (one fault server per node)")
    p.add_argument("--refs-per-dispatch", type=plain_int, default=cfg("refs_per_dispatch"),
                   help="page references per dispatch (AMB-4.11)")
    p.add_argument("--mnol", type=plain_int, help=f"MNOL (default "
                   f"{param_default(Coscheduling, 'mnol')}; not with rr alone)")
    p.add_argument("--mnod", type=plain_int, help=f"MNOD (default "
                   f"{param_default(Coscheduling, 'mnod')}; not with rr alone)")
    p.add_argument("--p", type=plain_float, help=f"P of eq. 2, in [0, 1] (default "
                   f"{param_default(Coscheduling, 'p')}; not with rr alone)")
    p.add_argument("--seed", type=plain_int, default=0)
    p.add_argument("--check", action="store_true", help="re-validate the run from its log")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_csm)


def add_bsp(sub: Any) -> None:
    """Register ``bsp`` on the ``schedsearch`` parser."""
    from sim.timeshare.bsp import BSPParams, NetParams, measure_cell
    from sim.timeshare.servers import ServerParams, SlotSchedule

    def share(name: str) -> Any:
        return param_default(SlotSchedule.for_share, name)

    p = sub.add_parser("bsp", help="one BSP cell under scheduling servers (Karl; µs)")
    p.add_argument("--g-us", type=plain_int, required=True, help="granularity g in µs")
    p.add_argument("--v", type=plain_float, default=field_default(BSPParams, "v"),
                   help="load imbalance, fraction of g")
    p.add_argument("--n", type=plain_int, default=field_default(BSPParams, "n"),
                   help="supersteps per measurement")
    p.add_argument("--i", type=plain_int, default=param_default(measure_cell, "i"),
                   help="measurements")
    p.add_argument("--pattern", default=field_default(BSPParams, "pattern"),
                   help="barrier | complete")
    p.add_argument("--spin-us", type=plain_int, default=field_default(BSPParams, "spin_us"),
                   help="spin time in µs (0 = blocking)")
    p.add_argument("--share", type=plain_float,
                   help=f"CPU share of the program (default {share('share')})")
    p.add_argument("--round-us", type=plain_int,
                   help=f"round length in µs (default {share('round_us')})")
    p.add_argument("--slot-us", type=plain_int,
                   help=f"slot length in µs (default {share('slot_us')})")
    p.add_argument("--placement", help=f"contiguous | spread (default {share('place')})")
    p.add_argument("--regime", default=field_default(ServerParams, "regime"),
                   help="none | unsync | sync (none: no server; the five options above and "
                        "--wakeup are refused)")
    p.add_argument("--wakeup", help=f"immediate | tick (default "
                   f"{field_default(ServerParams, 'ctl_block_wakeup')})")
    p.add_argument("--latency-us", type=plain_int, default=field_default(NetParams, "latency_us"),
                   help="message latency in µs")
    p.add_argument("--seed", type=plain_int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bsp)
