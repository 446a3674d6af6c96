"""Boxes for untrusted work: model-written Python (the experiment sandbox) and model-written LaTeX.

A box is a bubblewrap container (`bubblewrap.py`) whose limits hold for all its processes
together (`cgroups.py`), started and watched by `box.py`:
- only what the work needs is visible, read-only: the interpreter and its libraries, or the TeX
  trees; the one writable place is a size-capped tmpfs;
- no network, no other process, no host socket, no /tmp, /root or $LEMMATA_HOME of the host;
- an environment built from nothing;
- an unprivileged uid that is not uid 0 outside, no capabilities, no new privileges;
- memory, process count and CPU capped for the whole box, a wall clock, death with its parent.
Nothing here relies on the code inside cooperating: see SECURITY.md for what each layer holds.
"""
