"""``python -m snlmarkov``: the command line."""

from .cli import main

raise SystemExit(main())
