"""The official MCP Python SDK through Quire's whole OAuth flow, driven by a Rust test.

Usage: oauth_client.py MCP_URL REDIRECT_URI MODE

The SDK discovers the protected resource and the authorization server, registers itself
dynamically, and opens the authorization URL: this script prints that URL on a line
`AUTHORIZE <url>` and waits for the test, which signs in and consents as a person would,
to write back the URL the browser was redirected to. Then it lists the tools and calls
`list_pages`, and prints one line `RESULT <json>` with what the test checks: the tool names,
the access token, and the `resource` the token request carried.
"""

import asyncio
import json
import sys
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class Memory:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def main(url: str, redirect_uri: str, mode: str) -> None:
    storage = Memory()
    token_requests: list[dict[str, list[str]]] = []

    async def redirect_handler(authorize_url: str) -> None:
        print(f"AUTHORIZE {authorize_url}", flush=True)

    async def callback_handler() -> AuthorizationCodeResult:
        line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        query = parse_qs(urlparse(line.strip()).query)
        return AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )

    async def note_token_request(request: httpx2.Request) -> None:
        if request.url.path.endswith("/token") and request.method == "POST":
            token_requests.append(parse_qs(request.content.decode()))

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Notes",
            redirect_uris=[redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with httpx2.AsyncClient(
        auth=provider,
        event_hooks={"request": [note_token_request]},
        timeout=httpx2.Timeout(30.0, read=120.0),
    ) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            tools = await client.list_tools()
            listed = await client.call_tool("list_pages", {})
    result = {
        "tools": [t.name for t in tools.tools],
        "list_pages_is_error": listed.is_error,
        "access_token": storage.tokens.access_token if storage.tokens else None,
        "client_id": storage.client.client_id if storage.client else None,
        "token_request_resources": [r.get("resource", [None])[0] for r in token_requests],
    }
    print(f"RESULT {json.dumps(result)}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
