"""A program without the ``if __name__ == "__main__"`` guard that starts a spawned process: the child imports this
file, tries to start a process of its own there, and fails (as multiprocessing's documentation warns)."""

import multiprocessing

from extrap_plugins import instrument

with instrument.region("main"):
    process = multiprocessing.get_context("spawn").Process(target=print)
    process.start()
    process.join()
    print(process.exitcode)
