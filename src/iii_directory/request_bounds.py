"""Length bounds of request strings, published as `maxLength` in the request schemas
(docs/input-bounds.md).

A string that reaches a URL, a header, a command line or a file name is bounded where the
request is parsed, so an over-long one is a request-shape error naming the field instead of a
library refusing it mid-call. Each bound is far above any real value and far below what the
library behind it refuses (httpx: 64 KiB URLs; Linux: 128 KiB per argument, 255-byte file names).
"""

from __future__ import annotations

REGISTRY_TEXT_CHARS = 256
"""Registry worker names, versions, tags and search text: each goes into a registry URL."""
CURSOR_CHARS = 1024
"""The registry's opaque paging cursor, passed back verbatim in a query string."""
URL_CHARS = 2048
"""A repository URL (the common practical URL length of browsers and servers)."""
GIT_REF_CHARS = 1024
"""A branch name handed to `git clone --branch`."""
FILE_NAME_CHARS = 255
"""One path segment that becomes a directory name (NAME_MAX)."""
ID_CHARS = 1024
"""Ids and paths of the directory (skill ids and prefixes, kit refs and file paths, engine
function ids): the skill id rule's own limit; 1,024 characters are at most 4 KiB of UTF-8, the
PATH_MAX of Linux."""
LABEL_CHARS = 256
"""Short tokens: digests, plan ids, skill types, event names."""
