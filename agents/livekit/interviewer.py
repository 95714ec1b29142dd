"""Insight's interviewer for voice interviews on LiveKit (the LiveKit Agents framework).

LiveKit dispatches this worker to an interview's room (`insight-<room id>`) when the
respondent joins it with the token the join answer gave. The worker reads its
instructions from Insight (`GET /api/interviews/agent-config/{room_id}`, with the
`X-Agent-Secret` header), talks with the respondent through speech-to-text, a model and
text-to-speech (any OpenAI-compatible servers), closes politely when the interview's
time is up, and posts the transcript to Insight (`POST /api/interviews/session-report`),
where it becomes the record of the interview.

Settings (environment variables):
  INSIGHT_URL            Insight's base URL, e.g. https://insight.example.org
  INSIGHT_AGENT_SECRET   the same secret as the Insight instance's
  LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET   read by the LiveKit Agents framework
  AGENT_LLM_BASE_URL, AGENT_LLM_MODEL, AGENT_LLM_API_KEY     the interviewer's model
  AGENT_STT_BASE_URL, AGENT_STT_MODEL, AGENT_STT_API_KEY     speech-to-text
  AGENT_TTS_BASE_URL, AGENT_TTS_MODEL, AGENT_TTS_VOICE, AGENT_TTS_API_KEY   text-to-speech

Run: `python interviewer.py start` (or `dev` while trying it out).
"""

import asyncio
import datetime as dt
import logging
import os

import aiohttp
from livekit.agents import Agent, AgentSession, ConversationItemAddedEvent, JobContext, WorkerOptions, cli
from livekit.plugins import openai, silero

log = logging.getLogger("insight-interviewer")

# Close this long before the hard end, so the goodbye is heard.
CLOSING_SECONDS = 60


def setting(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if not value:
        raise SystemExit(f"{name} is not set")
    return value


def room_id_of(room_name: str) -> str | None:
    return room_name.removeprefix("insight-") if room_name.startswith("insight-") else None


async def insight(http: aiohttp.ClientSession, method: str, path: str, body: dict | None = None) -> dict:
    url = setting("INSIGHT_URL").rstrip("/") + path
    headers = {"X-Agent-Secret": setting("INSIGHT_AGENT_SECRET")}
    async with http.request(method, url, json=body, headers=headers) as response:
        answer = await response.json(content_type=None)
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {answer}")
        return answer


def speech_to_text(language: str):
    return openai.STT(
        base_url=os.environ.get("AGENT_STT_BASE_URL"),
        api_key=os.environ.get("AGENT_STT_API_KEY", "none"),
        model=os.environ.get("AGENT_STT_MODEL", "whisper-1"),
        language=language.split("-")[0],
    )


def model():
    return openai.LLM(
        base_url=os.environ.get("AGENT_LLM_BASE_URL"),
        api_key=os.environ.get("AGENT_LLM_API_KEY", "none"),
        model=os.environ.get("AGENT_LLM_MODEL", "gpt-4o-mini"),
    )


def text_to_speech():
    return openai.TTS(
        base_url=os.environ.get("AGENT_TTS_BASE_URL"),
        api_key=os.environ.get("AGENT_TTS_API_KEY", "none"),
        model=os.environ.get("AGENT_TTS_MODEL", "tts-1"),
        voice=os.environ.get("AGENT_TTS_VOICE", "alloy"),
    )


async def entrypoint(ctx: JobContext) -> None:
    room_id = room_id_of(ctx.room.name)
    if room_id is None:
        log.info("not an Insight interview room: %s", ctx.room.name)
        return
    http = aiohttp.ClientSession()
    config = await insight(http, "GET", f"/api/interviews/agent-config/{room_id}")
    if config["status"] not in ("pending", "active"):
        log.info("room %s is %s; nothing to do", room_id, config["status"])
        await http.close()
        return

    transcript: list[dict] = []
    reported = asyncio.Event()

    async def report() -> None:
        # Once, whatever ends the session: the goodbye, the respondent leaving, a shutdown.
        if reported.is_set():
            return
        reported.set()
        try:
            if transcript:
                await insight(http, "POST", "/api/interviews/session-report",
                              {"room_id": room_id, "transcript": transcript})
        finally:
            await http.close()

    ctx.add_shutdown_callback(report)
    await ctx.connect()

    session = AgentSession(
        stt=speech_to_text(config["language"]),
        llm=model(),
        tts=text_to_speech(),
        vad=silero.VAD.load(),
    )

    @session.on("conversation_item_added")
    def keep(event: ConversationItemAddedEvent) -> None:
        item = event.item
        text = (item.text_content or "").strip()
        if text and item.role in ("user", "assistant"):
            transcript.append({
                "role": "respondent" if item.role == "user" else "interviewer",
                "text": text,
                "at": dt.datetime.now(dt.timezone.utc).isoformat(),
            })

    await session.start(room=ctx.room, agent=Agent(instructions=config["instructions"]))
    await session.generate_reply(
        instructions=f"Open the interview in {config['language_name']} with this greeting, "
        f"in your own words: {config['greeting']}"
    )

    ends_at = dt.datetime.fromisoformat(config["ends_at"].replace("Z", "+00:00"))
    left = (ends_at - dt.datetime.now(dt.timezone.utc)).total_seconds()
    await asyncio.sleep(max(0.0, left - CLOSING_SECONDS))
    await session.generate_reply(
        instructions="The interview's time is up. Thank the respondent warmly and say goodbye now."
    )
    await asyncio.sleep(CLOSING_SECONDS / 2)
    await report()
    ctx.shutdown(reason="the interview's time is up")


if __name__ == "__main__":
    cli.run_app(WorkerOptions(entrypoint_fnc=entrypoint))
