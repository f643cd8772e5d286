"""The one id pattern (stdlib only: the API's path parameters use it without loading a model).

Workloads, trials, estimates, comparisons, snapshots and every id the API takes in a path or a
body: ASCII letters, digits and . _ : + -, starting with a letter or digit, at most 128
characters. No `/` (an id is one path segment: one with a slash could be created and never
read), no space, control or surrogate character (an id is printed, logged and put in keys as
it is). Anything else is a 422 naming the field.
"""

from __future__ import annotations

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$"
ID_MAX_LENGTH = 128
