"""Write ``extrap_kept_values.extra-p``: an Extra-P 4.2.5 experiment archive that keeps every repetition.

The shared data only has archives without repetitions; this one exercises
the ``values/<chunk>.vals`` store.  Run with Extra-P's own interpreter::

    ../venv-extrap/bin/python tests/readers/data/make_extrap_archive.py \
        ../shared/data/extrap/text/one_parameter_3.txt
"""

import pathlib
import sys

from extrap.fileio.experiment_io import write_experiment
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator


def main(source: pathlib.Path, out: pathlib.Path) -> None:
    reader = TextFileReader()
    reader.keep_values = True
    experiment = reader.read_experiment(source)
    ModelGenerator(experiment).model_all()
    write_experiment(experiment, out)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(__file__).with_name("extrap_kept_values.extra-p"))
