"""``python -m snlmarkov``: the command line (Ctrl-C during start-up exits quietly too)."""

try:
    from .cli import main
except KeyboardInterrupt:  # pragma: no cover - interrupted while importing
    import sys

    print("snlmarkov: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
