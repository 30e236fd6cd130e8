"""A program that makes processes of its own: ``pool METHOD`` maps over a multiprocessing pool, then ends a
process of its own by SIGTERM (``Process.terminate()``, as a pool ends its workers); ``fork`` forks a child
that ends normally; ``early`` ends a spawned process by SIGTERM while it still imports this file (a pool that
ends at once ends workers that are still starting)."""

import multiprocessing
import os
import sys
import time

from extrap_plugins import instrument


@instrument.region
def square(x):
    return x * x


def sleep(started):
    started.set()
    time.sleep(60)


def nothing():
    pass


if __name__ == "__mp_main__" and os.environ.get("EARLY_MARK"):  # a spawned child, importing this file
    square(3)  # uses the shim before multiprocessing knows the process is a child
    open(os.environ["EARLY_MARK"], "w").close()
    time.sleep(60)


if __name__ == "__main__":
    with instrument.region("main"):
        square(1)
        if sys.argv[1] == "pool":
            context = multiprocessing.get_context(sys.argv[2])
            with context.Pool(2) as pool:
                print(sum(pool.map(square, range(4))))
            started = context.Event()
            process = context.Process(target=sleep, args=(started,))
            process.start()
            started.wait(60)
            process.terminate()
            process.join()
            print(process.exitcode)
        elif sys.argv[1] == "early":
            os.environ["EARLY_MARK"] = mark = os.path.abspath("importing")
            process = multiprocessing.get_context("spawn").Process(target=nothing)
            process.start()
            for _ in range(600):
                if os.path.exists(mark):
                    break
                time.sleep(0.1)
            os.remove(mark)
            process.terminate()
            process.join()
            print(process.exitcode)
        else:
            child = os.fork()
            if child == 0:
                with instrument.region("child"):
                    square(2)
                sys.exit(0)
            os.waitpid(child, 0)
