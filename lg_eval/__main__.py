"""``python -m lg_eval`` is the ``lg-eval`` command."""

from lg_eval.cli import main

main()
