"""Drives Insight's MCP server with the official MCP Python SDK (PyPI `mcp`), as an
assistant would: it connects to the URL with a bearer token, runs the steps it reads as
JSON on stdin, and prints what the server answered as JSON, for the Rust test to judge.

stdin: {"url": ..., "token": ..., "steps": [{"op": "list_tools"}, {"op": "call_tool",
"name": ..., "arguments": {...}}, {"op": "list_resources"}, {"op": "read_resource",
"uri": ...}, {"op": "list_resource_templates"}], "repeat": n (optional, for timing)}
"""

import json
import sys
import time

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def call_result(result):
    text = "".join(block.text for block in result.content if getattr(block, "type", "") == "text")
    return {"is_error": bool(result.is_error), "structured": result.structured_content, "text": text}


async def run_step(client, step):
    op = step["op"]
    try:
        if op == "list_tools":
            tools = (await client.list_tools()).tools
            return {
                "tools": [
                    {
                        "name": tool.name,
                        "read_only": bool(tool.annotations and tool.annotations.read_only_hint),
                        "required": tool.input_schema.get("required", []),
                    }
                    for tool in tools
                ]
            }
        if op == "call_tool":
            return call_result(await client.call_tool(step["name"], step.get("arguments") or {}))
        if op == "list_resources":
            return {"uris": [str(r.uri) for r in (await client.list_resources()).resources]}
        if op == "list_resource_templates":
            templates = (await client.list_resource_templates()).resource_templates
            return {"templates": [t.uri_template for t in templates]}
        if op == "read_resource":
            contents = (await client.read_resource(step["uri"])).contents
            return {"text": contents[0].text, "mime": contents[0].mime_type}
    except MCPError as error:
        return {"error": str(error)}
    raise ValueError(f"unknown step {op}")


async def main():
    plan = json.load(sys.stdin)
    headers = {"Authorization": f"Bearer {plan['token']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        transport = streamable_http_client(plan["url"], http_client=http)
        async with Client(transport, cache=None) as client:
            out = {
                "server": client.server_info.name if client.server_info else None,
                "protocol": client.protocol_version,
                "instructions": client.instructions,
                "steps": [],
            }
            repeat = plan.get("repeat", 1)
            started = time.perf_counter()
            for _ in range(repeat):
                out["steps"] = [await run_step(client, step) for step in plan["steps"]]
            out["seconds"] = time.perf_counter() - started
    print(json.dumps(out))


anyio.run(main)
