"""``agentls acp``: the Agent Client Protocol front over the same session layer as ``agentls serve``.

The front holds no agent logic: ACP requests become calls of the
:class:`~agentls.session.manager.SessionManager`, the sessions' notifications become
``session/update``s, and the permission policy's questions ``session/request_permission``.
"""

import agentls.fronts.acp.sdk  # noqa: F401  (before any module of the front imports the SDK)
