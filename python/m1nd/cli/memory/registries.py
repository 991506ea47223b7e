"""The registries of ``m1nd memory``: agents, projects, categories, applicability, tags and the read-only
type lists (source, entry, session, relationship and content types)."""

from __future__ import annotations


import click

from m1nd.cli.memory.common import (acting_agent, emit_json, handled, json_option, memory_group, open_service,
                                    out)


@memory_group.group("agents")
def agents_group() -> None:
    """Registered agents."""


@agents_group.command("list", help='List registered agents.')
@json_option
@handled
def agents_list_cmd(as_json: bool) -> None:
    rows = open_service().registry("agents")
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if not rows:
        out("No agents registered")
        return
    out("Registered agents:")
    for r in rows:
        out(f"  {r.id} - {r.description}")
        if r.domain:
            out(f"    Domain: {r.domain}")


@agents_group.command("add", help='Register an agent (id, --description, --domain).')
@click.argument("agent_id")
@click.option("-d", "--description")
@click.option("-D", "--domain")
@handled
def agents_add_cmd(agent_id: str, description: str | None, domain: str | None) -> None:
    r = open_service().add_agent(agent_id, description, domain)
    out(f"Added agent: {r.id}")


@agents_group.command("show", help='Show one registered agent.')
@click.argument("agent_id")
@json_option
@handled
def agents_show_cmd(agent_id: str, as_json: bool) -> None:
    r = open_service().show_agent(agent_id)
    if as_json:
        emit_json(r.to_dict())
        return
    out(f"Agent: {r.id}")
    out(f"Description: {r.description}")
    out(f"Domain: {r.domain or '-'}")
    out(f"Created: {r.created_at}")
    out(f"Updated: {r.updated_at}")


@memory_group.group("projects")
def projects_group() -> None:
    """Registered projects."""


@projects_group.command("list", help='List registered projects.')
@json_option
@handled
def projects_list_cmd(as_json: bool) -> None:
    rows = open_service().registry("projects")
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if not rows:
        out("No projects registered")
        return
    out("Registered projects:")
    for r in rows:
        out(f"  {r.id} - {r.name}")
        for label, key in (("Path", "path"), ("Repo", "repo_url"), ("Description", "description")):
            if getattr(r, key):
                out(f"    {label}: {getattr(r, key)}")


@projects_group.command("add", help='Register a project.')
@click.option("--id", "pid", required=True)
@click.option("--name", required=True)
@click.option("--path")
@click.option("--repo-url")
@click.option("--description")
@handled
def projects_add_cmd(pid: str, name: str, path: str | None, repo_url: str | None, description: str | None) -> None:
    r = open_service().add_project(pid, name, path=path, repo_url=repo_url, description=description)
    out(f"Added project: {r.id}")


@memory_group.group("categories")
def categories_group() -> None:
    """Entry categories."""


@categories_group.command("list", help='List entry categories.')
@json_option
@handled
def categories_list_cmd(as_json: bool) -> None:
    rows = open_service().registry("categories")
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    out("Categories:")
    for r in rows:
        out(f"  {r.id} - {r.description}")


@categories_group.command("add", help='Add an entry category.')
@click.argument("category_id")
@click.argument("description")
@handled
def categories_add_cmd(category_id: str, description: str) -> None:
    r = open_service().add_category(category_id, description)
    out(f"Added category: {r.id}")


@categories_group.command("remove", help='Remove an unused entry category.')
@click.argument("category_id")
@handled
def categories_remove_cmd(category_id: str) -> None:
    r = open_service().remove_category(category_id)
    out(f"Deleted category: {r.id}")


@memory_group.group("applicability")
def applicability_group() -> None:
    """Applicability contexts."""


@applicability_group.command("list", help='List applicability contexts.')
@json_option
@handled
def applicability_list_cmd(as_json: bool) -> None:
    rows = open_service().registry("applicability")
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    out("Applicability types:")
    for r in rows:
        out(f"  {r.id} - {r.description}" + (f" (scope: {r.scope})" if r.scope else ""))


@applicability_group.command("add", help='Add an applicability context.')
@click.option("--id", "aid", required=True)
@click.option("--description", required=True)
@click.option("--scope")
@handled
def applicability_add_cmd(aid: str, description: str, scope: str | None) -> None:
    r = open_service().add_applicability(aid, description, scope)
    out(f"Added applicability: {r.id}")


@memory_group.group("tags")
def tags_group() -> None:
    """Tags of visible entries."""


@tags_group.command("list", help='List the tags of visible entries with their counts.')
@click.option("--category")
@json_option
@handled
def tags_list_cmd(category: str | None, as_json: bool) -> None:
    tags = open_service().tags(agent=acting_agent(), category=category)
    if as_json:
        emit_json(tags)
        return
    if not tags:
        out("No tags found")
        return
    out(f"Tags in category '{category}':" if category else "All tags:")
    for t in tags:
        out(f"  {t}")


def _registry_group(name: str, kind: str, title: str) -> None:
    @memory_group.group(name)
    def grp() -> None:
        pass
    grp.help = f"{title} (read-only registry)."

    @grp.command("list")
    @json_option
    @handled
    def list_(as_json: bool) -> None:
        rows = open_service().registry(kind)
        if as_json:
            emit_json([r.to_dict() for r in rows])
            return
        out(f"{title}:")
        for r in rows:
            line = f"  {r.id} - {r.description}"
            if kind == "relationship_types":
                line += " (directional)" if r.directional else " (bidirectional)"
            if kind == "content_types" and r.file_extensions:
                line += f" ({', '.join(r.file_extensions)})"
            out(line)
    list_.help = f"List {title.lower()}."


_registry_group("source-types", "source_types", "Source types")
_registry_group("entry-types", "entry_types", "Entry types")
_registry_group("session-types", "session_types", "Session types")
_registry_group("relationship-types", "relationship_types", "Relationship types")
_registry_group("content-types", "content_types", "Content types")
