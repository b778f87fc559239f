"""The request and response models of `directory::agents::*` (docs/rules/surfaces.md §8,
§11.3): one place for the published field names, limits and descriptions of the agents surface."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from ..content.id_fields import NameText
from ..content.stale import EXPECTED_SHA256_TEXT
from ..lazy import LazyModule
from ..models import DigestText, FunctionIdText, Request, Response

if TYPE_CHECKING:
    from ..content import agent_sources
    from ..content import agents as store
else:  # imported by the first agents call, not to register (src/iii_directory/lazy.py)
    store = LazyModule("iii_directory.content.agents")
    agent_sources = LazyModule("iii_directory.content.agent_sources")

_EXISTING_ID = "Existing agent profile id, as returned by `directory::agents::list`."
_MODIFIED_AT = "File mtime as RFC 3339; empty for a bundled profile."
_EXTENDS = "Parent profile id (`extends:`), as declared; `null` = none."




class AgentSource(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"kit", "worker", "version", "modified"})

    kind: Literal["kit", "worker", "local", "global", "builtin"]
    kit: str | None = Field(default=None, description="Owning kit (`<handle>/<name>`) when `kind` is `kit`.")
    modified: bool | None = Field(default=None, description="The file differs from what its kit or worker wrote.")
    version: str | None = Field(default=None, description="Version of the kit or worker that wrote the file.")
    worker: str | None = Field(default=None, description="Owning worker when `kind` is `worker`.")


class AgentEntry(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"composer_placeholder", "inheritance_error"})

    builtin: bool = Field(
        description="Bundled with the worker, no file behind it: editing it creates the local file "
        "(which then shadows this entry); there is nothing to delete."
    )
    color: str | None = Field(description="Harness subagent color token for display identities; `null` = neutral.")
    composer_placeholder: str | None = Field(
        default=None,
        description="Example request for the chat's empty composer, from this profile's OWN "
        "frontmatter (never inherited through `extends`); omitted when absent or blank. "
        "Presentation only — never part of the prompt.",
    )
    description: str
    extends: str | None = Field(description=_EXTENDS)
    function_count: int = Field(
        ge=0,
        description="Number of preloaded functions (contracts the harness pre-loads into the session "
        "prompt), resolved through `extends`; `0` = none.",
    )
    hidden: bool = Field(description="Hidden from the chat's new-session gallery (still selectable by id).")
    icon: str | None = Field(description="Harness subagent icon token for spawn display identities; `null` = caller picks.")
    id: str = Field(
        description="Flat agent profile id (the file stem) — what `harness::send { options: { agent } }` will take."
    )
    inheritance_error: str | None = Field(
        default=None,
        description="Set when the `extends` chain does not resolve (unknown parent, loop, too deep): "
        "the row carries the profile's own fields only, and the harness refuses to run it until the "
        "chain is fixed.",
    )
    logo: str | None = Field(description="Emoji logo, `null` when the agent profile has none.")
    model: str | None = Field(
        description="Model id for sessions using this profile, resolved through `extends`; `null` = the send decides."
    )
    modified_at: str = Field(description=_MODIFIED_AT)
    name: str = Field(description="Display name from frontmatter (`name:`).")
    reasoning_effort: str | None = Field(
        description="Provider-native reasoning effort paired with `model`, resolved through `extends`; "
        "`null` = the model/provider default."
    )
    skill_count: int | None = Field(
        ge=0,
        description="Number of preloaded skills (bodies the harness pre-loads into the session prompt), "
        "resolved through `extends`; `null` = none.",
    )
    source: AgentSource = Field(
        description="Where the file came from: an installed kit (`kits.lock`), a worker's skills bundle "
        "(its completion marker), the project itself (`local`), the user-global root (`global`) or "
        "the worker binary (`builtin`). `modified` says whether a kit's or worker's file was edited here."
    )


class ListAgentsOutput(Response):
    agents: list[AgentEntry]


class AgentGetInput(Request):
    id: NameText
    raw: bool | None = Field(
        default=None,
        description="When true, also return the exact on-disk file (frontmatter included) as `raw`, "
        "ready for directory::agents::update.",
    )


class AgentGetOutput(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset(
        {"composer_placeholder", "skills_index", "inheritance_error", "raw"}
    )

    builtin: bool = Field(description="Bundled with the worker, no file behind it (see `list`).")
    color: str | None = Field(
        description="Harness subagent color token (closed set, validated at write time); `null` = neutral."
    )
    composer_placeholder: str | None = Field(
        default=None,
        description="Example request for the chat's empty composer (see `list`): this profile's own "
        "value, never inherited; omitted when absent or blank.",
    )
    description: str
    extends: str | None = Field(description=_EXTENDS)
    functions: list[str] = Field(
        description="Preloaded functions, resolved through `extends` (the nearest profile with a "
        "non-empty list): engine function ids whose contracts the harness pre-loads into the system prompt "
        "of every session running as this profile, so the model calls them without discovery or a "
        "contract lookup. Empty = none."
    )
    hidden: bool = Field(description="Hidden from the chat's new-session gallery (still selectable by id).")
    icon: str | None = Field(
        description="Harness subagent icon token (closed set, validated at write time); `null` = caller picks."
    )
    id: str
    inheritance_error: str | None = Field(
        default=None,
        description="Set when the `extends` chain does not resolve (unknown parent, loop, deeper than 8): "
        "`system_prompt` and the inherited fields then come from this file alone, `raw` still "
        "round-trips so the chain can be fixed, and the harness refuses to run the profile meanwhile.",
    )
    logo: str | None
    model: str | None = Field(
        description="Model id for sessions using this profile, resolved through `extends`; `null` = the "
        "send decides. Served verbatim — resolution against the live model catalog happens where it is used."
    )
    modified_at: str = Field(description=_MODIFIED_AT)
    name: str
    raw: str | None = Field(
        default=None,
        description="FULL on-disk file content (this profile's own file, ancestors excluded). Present "
        "only when the request set `raw: true`.",
    )
    reasoning_effort: str | None = Field(
        description="Provider-native reasoning effort paired with `model`, resolved through `extends`; "
        "`null` = the model/provider default. Served verbatim and validated at use time."
    )
    skills: list[str] = Field(
        description="Preloaded skills, resolved through `extends` (the union of the chain's lists, root "
        "first): skill ids whose bodies the harness pre-loads into the system prompt of every session "
        "running as this profile. Empty = none. Never a filter on the skills index."
    )
    skills_index: bool | None = Field(
        default=None,
        description="`false` = sessions running as this profile start without the names-only skills "
        "index (`<available_skills>`), resolved through `extends`; omitted when no profile in the "
        "chain sets it (on).",
    )
    source: AgentSource = Field(description="Where the file came from (see `list`).")
    system_prompt: str = Field(
        description="The RESOLVED identity: every ancestor's body root-first, then this file's body, "
        "frontmatter stripped, joined by a blank line; blank bodies are skipped, so a profile with no "
        "prompt of its own serves its parent chain unchanged and a prompt-less profile without "
        '`extends` serves `""`. A profile that has a body and no `extends` serves that body verbatim.'
    )
    unknown_functions: list[str] = Field(
        description="`functions` entries the engine does not currently know (not registered right now, "
        "or a typo). Warnings — the profile still loads and the harness skips them; an empty list also "
        "results when the engine could not be asked."
    )
    unknown_skills: list[str] = Field(
        description="`skills` entries that resolve to no currently visible skill. Warnings — the agent "
        "profile still loads and the harness renders them as unavailable."
    )


class AgentCreateInput(Request):
    content: str = Field(
        description="Full file content, frontmatter included; `name` is required, the body is the "
        "system prompt and may be empty."
    )
    id: NameText = Field(
        description="New profile id, used as the file stem; lowercase ASCII, digits, `-` and `_` only, "
        "and not already taken."
    )


class AgentUpdateInput(Request):
    content: str = Field(
        description="FULL new file content, frontmatter block included — the string "
        "`directory::agents::get { raw: true }` returns, edited."
    )
    expected_sha256: DigestText = Field(default=None, description=EXPECTED_SHA256_TEXT)
    id: NameText = Field(description=_EXISTING_ID)


class AgentWriteOutput(Response):
    bytes: int = Field(ge=0, description="Bytes written.")
    description: str
    id: str
    logo: str | None
    modified_at: str = Field(description="File mtime after the write, RFC 3339.")
    name: str = Field(description="Display name parsed from the (new) frontmatter.")


class AgentDeleteInput(Request):
    id: NameText = Field(description=_EXISTING_ID)


class AgentDeleteOutput(Response):
    id: str


class AgentFunctionsInput(Request):
    functions: list[FunctionIdText] = Field(description="Engine function ids (e.g. `coder::tree`), verbatim, one per entry.")
    id: NameText = Field(description=_EXISTING_ID)


class AgentFunctionsOutput(Response):
    added: list[str] = Field(description="Ids this call actually added (already-present ids are not repeated).")
    bytes: int = Field(ge=0, description="Bytes on disk after the call.")
    functions: list[str] = Field(
        description="The profile's OWN `functions:` list after the write (not resolved through "
        "`extends`), in file order."
    )
    id: str
    modified_at: str = Field(description="File mtime after the call, RFC 3339.")
    removed: list[str] = Field(description="Ids this call actually removed (absent ids are ignored).")
    unchanged: bool = Field(description="True when the request changed nothing; the file was not rewritten.")
