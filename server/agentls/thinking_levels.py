"""The thinking levels: the one definition that the model layer, the wire schema and the command
line share (a module of the standard library only, so ``agentls serve``'s early ``initialize``
answer and ``agentls --help`` pay nothing for it).

Which of them a model supports is the model layer's :func:`agentls.ai.models.supported_thinking_levels`.
"""

from typing import Literal, TypeAlias, get_args

ModelThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
"""A session's thinking level, ``off`` included."""
ThinkingLevel: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh", "max"]
"""The levels at which the model thinks (a request's ``reasoning``)."""
THINKING_LEVELS: tuple[str, ...] = get_args(ModelThinkingLevel)
"""Every thinking level, from none to the most, as pi-ai orders them."""
