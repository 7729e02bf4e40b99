"""Run cvc5 on one SMT-LIB file: ``python -m benchmarks.cvc5_worker FILE SECONDS``.

Prints cvc5's solving time in seconds, then its answer (``unsat``, ``sat``,
``unknown``). A process of its own (benchmarks/nonlinear.py kills it if cvc5 overruns
its limit), importing nothing but cvc5 so that starting it costs little.
"""

from __future__ import annotations

import sys
import time


def solve(path: str, timeout: float) -> tuple[str, float]:
    """cvc5's answer on the file's (last) ``check-sat`` and the seconds it took."""
    import cvc5  # noqa: PLC0415

    tm = cvc5.TermManager()
    slv = cvc5.Solver(tm)
    slv.setOption("tlimit-per", str(int(timeout * 1000)))
    parser = cvc5.InputParser(slv)
    parser.setFileInput(cvc5.InputLanguage.SMT_LIB_2_6, path)
    sm = parser.getSymbolManager()
    answer, seconds = "none", 0.0
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        if str(cmd).startswith("(check-sat"):
            start = time.perf_counter()
            r = slv.checkSat()
            seconds = time.perf_counter() - start
            answer = "unsat" if r.isUnsat() else "sat" if r.isSat() else "unknown"
            continue
        cmd.invoke(slv, sm)
    return answer, seconds


if __name__ == "__main__":
    result, secs = solve(sys.argv[1], float(sys.argv[2]))
    print(f"{secs:.4f}")
    print(result)
