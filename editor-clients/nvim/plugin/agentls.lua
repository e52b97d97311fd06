-- agentls: user commands. The plugin's modules load on first use.
if vim.g.loaded_agentls then
  return
end
vim.g.loaded_agentls = true

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.notify("agentls needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

local function command(name, action, opts)
  vim.api.nvim_create_user_command(name, function(args)
    require("agentls").ensure_setup()
    require("agentls.commands")[action](args.args)
  end, opts)
end

local function complete_prompt(lead, line, pos)
  return require("agentls.complete").command_line(lead, line, pos)
end

command("AgentPrompt", "prompt", {
  nargs = "*",
  desc = "agentls: send a prompt, or run !command (asks for it without text)",
  complete = complete_prompt,
})
command("AgentSteer", "steer", { nargs = "*", desc = "agentls: steer the running agent", complete = complete_prompt })
command("AgentFollowUp", "follow_up", {
  nargs = "*",
  desc = "agentls: queue a follow-up message",
  complete = complete_prompt,
})
command("AgentAbort", "abort", { nargs = 0, desc = "agentls: abort the run and the running command" })
command("AgentCompact", "compact", { nargs = "*", desc = "agentls: compact the session's context (summarise it)" })
command("AgentContinue", "continue", { nargs = 0, desc = "agentls: continue the session" })
command("AgentNewSession", "new_session", { nargs = 0, desc = "agentls: start a new session" })
command("AgentSessions", "sessions", { nargs = 0, desc = "agentls: pick a stored session" })
command("AgentAccept", "accept", { nargs = 0, desc = "agentls: accept the change under review" })
command("AgentReject", "reject", {
  nargs = "*",
  desc = "agentls: reject the change under review (the reason goes to the model)",
})
command("AgentReview", "review", { nargs = 0, desc = "agentls: show the change waiting for review again" })
command("AgentPanel", "panel", { nargs = 0, desc = "agentls: toggle the transcript panel" })
command("AgentModel", "model", {
  nargs = "?",
  desc = "agentls: set the session's model (provider/id)",
  complete = function(lead)
    return require("agentls.complete").model(lead)
  end,
})

-- editor context: attachments of the next message
local function context_command(name, action, opts)
  vim.api.nvim_create_user_command(name, function(args)
    require("agentls").ensure_setup()
    require("agentls.commands")[action](args)
  end, opts)
end

context_command("AgentAddSelection", "add_selection", {
  range = true,
  desc = "agentls: attach the selected lines (or the visual selection) to the next message",
})
context_command("AgentAddFile", "add_file", {
  nargs = "?",
  complete = "file",
  desc = "agentls: attach a file (the current one without a path) to the next message",
})
context_command("AgentAddDiagnostics", "add_diagnostics", {
  nargs = 0,
  bang = true,
  desc = "agentls: attach the current buffer's diagnostics (! every buffer's) to the next message",
})
context_command("AgentClearContext", "clear_context", {
  nargs = 0,
  desc = "agentls: remove the attachments waiting for the next message",
})
