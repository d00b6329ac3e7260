"""Serve the lesson explorers as Voila apps (what `make apps` and tests/test_apps.py run): Voila with the shell-poll fix.

    python tools/serve_apps.py apps --no-browser --Voila.ip=127.0.0.1 --port=8866 --template=trustml

Takes Voila's own arguments. Voila executes each app through nbclient in this process, so the fix for the missed
shell wake-up (tools/kernel_wakeup.py) must be installed here before Voila starts.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_wakeup  # noqa: E402

kernel_wakeup.install()

if __name__ == '__main__':
    from voila.app import main
    sys.exit(main())
