"""One step of the interop test, run with the official Python MCP SDK (`mcp` 2.3.0) over
streamable HTTP with an API key, in the protocol era given: `legacy` (initialize handshake)
or `2026-07-28` (stateless, per-request `_meta`). Each run is a new client, as a retrying agent
would be; it prints one JSON object with what the server answered.

usage: python_sdk.py URL KEY MODE STEP [SLUG | TOOL ARGUMENTS_JSON]
  STEP: list | publish | password | delete | tool (calls TOOL with the JSON arguments)
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def run(url: str, key: str, mode: str, step: str, slug: str | None) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            if step == "list":
                tools = await client.list_tools()
                return {"tools": [t.name for t in tools.tools]}
            if step == "publish":
                result = await client.call_tool(
                    "publish_page",
                    {
                        "title": f"Interop {mode}",
                        "slug": slug,
                        "access": "public",
                        "request_id": f"interop-{slug}",
                        "files": [
                            {"path": "index.html", "content": f"<h1>hello from {mode}</h1>"}
                        ],
                    },
                )
            elif step == "password":
                result = await client.call_tool(
                    "update_page",
                    {"page": slug, "access": "password", "password": "interop-secret"},
                )
            elif step == "delete":
                result = await client.call_tool("delete_page", {"page": slug, "confirm": slug})
            elif step == "tool":
                result = await client.call_tool(slug, json.loads(sys.argv[6]))
            else:
                raise SystemExit(f"unknown step {step}")
            text = [c.text for c in result.content if getattr(c, "type", "") == "text"]
            return {
                "isError": bool(result.is_error),
                "structured": result.structured_content,
                "text": text,
            }


def main() -> None:
    url, key, mode, step = sys.argv[1:5]
    slug = sys.argv[5] if len(sys.argv) > 5 else None
    print(json.dumps(asyncio.run(run(url, key, mode, step, slug))))


if __name__ == "__main__":
    main()
