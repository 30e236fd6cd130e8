"""Write ``synthetic.jsonl``: times made from a known machine profile, to check ``whatif --calibrate``.

The true profile (per process): processor 2e9 flop/s, memory 5e8 loads/stores per second, bandwidth 1e9 bytes/s,
latency 5e-6 s per message.  Two regions below ``main`` (which sums them), per process::

    main->compute:  flop = 40 · n · log2(n),  loads_stores = 30 · n · log2(p)
    main->exchange: bytes_sent = bytes_received = 800 · n^(1/2) · log2(p),  messages_sent = 40 · log2(p)

time = Σ amount / rate + messages · latency, with ±1 % uniform noise, 3 repetitions, at p = 2..32, n = 1e4..1.6e5.
``tests/test_whatif.py`` builds the same data.

    python examples/codesign/make_synthetic.py
    extrap-plugins whatif examples/codesign/synthetic.jsonl --machine examples/codesign/machine.toml \\
        --calibrate --target p=256,n=1.6e5
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np

RATES = {"processor": 2e9, "memory": 5e8, "bandwidth": 1e9, "latency": 5e-6}


def amounts(p: float, n: float) -> dict[str, dict[str, float]]:
    compute = {"flop": 40 * n * math.log2(n), "loads_stores": 30 * n * math.log2(p)}
    exchange = {"bytes_sent": 800 * n**0.5 * math.log2(p), "bytes_received": 800 * n**0.5 * math.log2(p),
                "messages_sent": 40 * math.log2(p)}
    return {"main->compute": compute, "main->exchange": exchange,
            "main": {k: v for part in (compute, exchange) for k, v in part.items()}}


def true_time(values: dict[str, float]) -> float:
    return (values.get("flop", 0) / RATES["processor"] + values.get("loads_stores", 0) / RATES["memory"]
            + (values.get("bytes_sent", 0) + values.get("bytes_received", 0)) / RATES["bandwidth"]
            + values.get("messages_sent", 0) * RATES["latency"])


def main() -> None:
    rng = np.random.default_rng(1)
    lines = []
    for p in (2, 4, 8, 16, 32):
        for n in (1e4, 2e4, 4e4, 8e4, 1.6e5):
            for callpath, values in amounts(p, n).items():
                point = {"p": p, "n": n}
                for metric, value in values.items():
                    lines.append({"params": point, "callpath": callpath, "metric": metric, "value": value})
                exact = true_time(values)
                times = [exact * (1 + rng.uniform(-0.01, 0.01)) for _ in range(3)]
                lines.append({"params": point, "callpath": callpath, "metric": "time", "value": times})
    path = pathlib.Path(__file__).with_name("synthetic.jsonl")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    print(f"wrote {path} ({len(lines)} lines)")


if __name__ == "__main__":
    main()
