"""Agent hooks: memory that arrives with every prompt in Claude Code, Codex CLI and Gemini CLI
(design §9.5, issue 16).

The pipeline, one module per step:

* :mod:`talos.hooks.client` — ``talos hook AGENT``, the process the agent runs; standard library
  only until it knows no server can answer;
* :mod:`talos.hooks.server` — the resident process of a home, over a Unix socket;
* :mod:`talos.hooks.context` — what is delivered: recall for a prompt, a short block when a
  session starts, cut to the agent's budget;
* :mod:`talos.hooks.agents` — each agent's events, output shape and size limit;
* :mod:`talos.hooks.scope` — the event's folder → the scopes recalled from;
* :mod:`talos.hooks.state` — where the hook's files are; ``[hooks]`` settings of talos.toml;
* :mod:`talos.hooks.log` — the log of hooks that gave no context, shown by ``talos doctor``;
* :mod:`talos.hooks.install` — ``talos hook install|uninstall``: the agents' settings files.

``AGENT_HOOKS.md`` beside this file records what each agent's documentation says, with links:
the facts these modules rely on.
"""
