--- :checkhealth agentls: the server command, its version and capabilities, its models, the
--- project instructions and `/` commands it finds in the workspace, and the MCP servers (a
--- warning for each failed one or one waiting for trust, and for the configuration's problems).
---
--- When no server runs yet, the check starts the command once, does the `initialize`
--- handshake, asks what it reports and shuts it down. The context files and `/` commands are
--- the current session's; without one, those of a session started for the check and deleted.
local M = {}

local health = vim.health
local frames = require("agentls.frames")
local frame = frames.encode

--- Start a fresh server, `initialize` it and call `report(ask, initialize_result)`, where
--- `ask(method, params)` returns a request's result, or nil and the error; then shut it down.
--- Returns the answer to `initialize` (a JSON-RPC response), or nil and why there is none.
local function probe(cmd, env, init_options, timeout_ms, report)
  local reader, responses = frames.reader(), {}
  local ok, process = pcall(vim.system, cmd, {
    env = env,
    stdin = true,
    stdout = function(_, data)
      reader.feed(data)
    end,
    stderr = function() end,
  })
  if not ok then
    return nil, tostring(process)
  end
  local function parse()
    for _, message in ipairs(reader.take()) do
      if message.id and message.method == nil then
        responses[message.id] = message
      end
    end
  end
  local last_id = 0
  local function send(method, params)
    last_id = last_id + 1
    local id = last_id
    process:write(frame({ id = id, method = method, params = params }))
    vim.wait(timeout_ms, function()
      parse()
      return responses[id] ~= nil
    end, 20)
    return responses[id]
  end
  local init = send("initialize", {
    processId = vim.fn.getpid(),
    rootUri = vim.NIL,
    capabilities = vim.empty_dict(),
    initializationOptions = next(init_options) and init_options or vim.empty_dict(),
  })
  if init and init.result then
    process:write(frame({ method = "initialized", params = vim.empty_dict() }))
    report(function(method, params)
      local response = send(method, next(params) and params or vim.empty_dict())
      if not response then
        return nil, ("no answer to %s within %d ms"):format(method, timeout_ms)
      end
      if response.error then
        return nil, tostring(response.error.message)
      end
      return response.result
    end, init.result)
    send("shutdown", vim.NIL)
    process:write(frame({ method = "exit" }))
  end
  pcall(process.write, process, nil)
  process:wait(3000) -- killed if it has not exited by then
  if not init then
    return nil, ("no answer to initialize within %d ms"):format(timeout_ms)
  end
  return init
end

local function report_capabilities(server_info, capabilities)
  server_info = type(server_info) == "table" and server_info or {}
  if server_info.version then
    health.ok(("server: %s %s"):format(server_info.name or "agentls", server_info.version))
  else
    health.warn("the server did not report a version (serverInfo)")
  end
  local agent = vim.tbl_get(capabilities or {}, "experimental", "agent")
  if type(agent) ~= "table" then
    health.error("the server does not advertise capabilities.experimental.agent: is this agentls?")
    return false
  end
  health.ok(("protocol version %s"):format(tostring(agent.version)))
  health.info("features: " .. table.concat(agent.features or {}, ", "))
  health.info(("methods: %d (%s)"):format(#(agent.methods or {}), table.concat(agent.methods or {}, ", ")))
  local sync = capabilities.textDocumentSync
  health.info("textDocumentSync: " .. vim.inspect(sync, { newline = " ", indent = "" }))
  return true
end

local function report_models(ask)
  local result, err = ask("agent/listModels", {})
  if not result then
    health.warn("agent/listModels failed: " .. err)
    return
  end
  local names = {}
  for _, model in ipairs(result.models or {}) do
    names[#names + 1] = model.provider .. "/" .. model.id
  end
  if #names == 0 then
    health.warn("no models: configure a provider or a faux script (initializationOptions.fauxScript), see the README")
  else
    health.ok("models: " .. table.concat(names, ", "))
  end
end

--- The sandbox of the agent's bash (`agent/getState`'s `sandbox`): its mode, network, writable
--- and read-only folders, status and reason; a warning when the kernel refuses it (the agent's
--- commands do not run) or it runs unconfined.
function M.report_sandbox(sandbox, which)
  if type(sandbox) ~= "table" or type(sandbox.status) ~= "string" then
    health.info(("sandbox (%s): not reported by the server"):format(which))
    return
  end
  local visible = require("agentls.util").visible
  local function list(paths)
    local shown = {}
    for _, path in ipairs(type(paths) == "table" and paths or {}) do
      shown[#shown + 1] = visible(tostring(path), true)
    end
    return #shown > 0 and table.concat(shown, ", ") or "none"
  end
  local mode = visible(tostring(sandbox.mode), true)
  if sandbox.status == "off" then
    health.info(("sandbox (%s): off: the agent's bash runs unconfined (setup{ sandbox = { mode = "
      .. '"workspace-write" } } confines it)'):format(which))
    return
  end
  local head = ("sandbox (%s): mode %s, network %s, status %s"):format(which, mode, sandbox.network and "on" or "off",
    visible(sandbox.status, true))
  local reason = type(sandbox.reason) == "string" and visible(sandbox.reason, true) or nil
  if sandbox.status == "enforced" then
    health.ok(head)
  elseif sandbox.status == "refused" then
    health.warn(head .. (reason and (": " .. reason) or ""), {
      "the agent's bash commands do not run: this kernel cannot enforce the sandbox",
      'turn it off (setup{ sandbox = { mode = "off" } }), or let commands run unconfined where it cannot be '
        .. 'enforced (sandbox.fallback = "unconfined")',
    })
  elseif sandbox.status == "unconfined" then
    health.warn(head .. (reason and (": " .. reason) or ""), {
      "the agent's bash commands run unconfined (sandbox.fallback = \"unconfined\"): this kernel cannot enforce it",
    })
  else
    health.info(head .. (reason and (": " .. reason) or ""))
  end
  health.info(("sandbox writable roots: %s"):format(list(sandbox.writableRoots)))
  if type(sandbox.readOnly) == "table" and #sandbox.readOnly > 0 then
    health.info(("sandbox read-only: %s"):format(list(sandbox.readOnly)))
  end
  if sandbox.fallback then
    health.info(("sandbox fallback: %s"):format(visible(tostring(sandbox.fallback), true)))
  end
end

--- The budget's limits and spend (`agent/getState`'s `budget`).
function M.report_budget(budget, which)
  local spend = require("agentls.render").budget_spend(budget)
  if not spend then
    health.info(("budget (%s): no limits (setup{ budget = { max_turns = 20 } } or :AgentBudget set them)"):format(which))
    return
  end
  health.info(("budget (%s): %s (spent of the limit)"):format(which, spend.text))
end

--- The project instructions and `/` commands of `session_id`.
local function report_session(ask, session_id, which)
  local state, err = ask("agent/getState", { sessionId = session_id })
  if not state then
    health.warn("agent/getState failed: " .. err)
    return
  end
  local files = state.contextFiles or {}
  if #files == 0 then
    local where = "AGENTS.md or CLAUDE.md in the workspace or a folder above it"
    health.info(("context files (%s): none (%s)"):format(which, where))
  else
    health.ok(("context files (%s): %s"):format(which, table.concat(files, ", ")))
  end
  M.report_sandbox(state.sandbox, which)
  M.report_budget(state.budget, which)
  local listing, list_err = ask("agent/listCommands", { sessionId = session_id })
  if not listing then
    health.warn("agent/listCommands failed: " .. list_err)
    return
  end
  local names = vim.tbl_map(function(command)
    return "/" .. command.name
  end, listing.commands or {})
  health.info(("prompt templates and skills: %s"):format(#names > 0 and table.concat(names, " ") or "none"))
end

--- What the server reads from the workspace, through the current session or a throwaway one.
local function report_workspace(ask, root)
  local state = require("agentls.state")
  local current = state.current
  if current and not state.detached[current] then
    report_session(ask, current, "current session")
    return current
  end
  local session, err = ask("agent/newSession", { cwd = root })
  if not session then
    health.info("context files: unknown, no session could start: " .. err)
    return nil
  end
  report_session(ask, session.sessionId, "a new session")
  local listing = ask("agent/listMcpServers", { sessionId = session.sessionId })
  ask("agent/deleteSession", { sessionId = session.sessionId })
  return nil, listing
end

--- The MCP servers of `session_id` (every server the process knows without one): status,
--- errors and the configuration's problems.
local function report_mcp(ask, session_id, listing)
  health.start("agentls: MCP servers")
  local err
  if not listing then
    listing, err = ask("agent/listMcpServers", session_id and { sessionId = session_id } or {})
  end
  if not listing then
    health.warn("agent/listMcpServers failed: " .. err)
    return
  end
  local mcp = require("agentls.mcp")
  local servers = listing.servers or {}
  if #servers == 0 then
    health.info("none (.mcp.json in the workspace, <dataDir>/mcp.json or setup{ mcp_servers = ... } add them)")
  end
  for _, server in ipairs(servers) do
    local tools = server.tools or {}
    local text = ("%s (%s, %s): %s"):format(server.name, server.transport, server.source, mcp.status_text[server.status] or server.status)
    local error = type(server.error) == "string" and server.error or nil
    if server.status == "ready" then
      health.ok(("%s · %d tool%s"):format(text, #tools, #tools == 1 and "" or "s"))
    elseif server.status == "failed" then
      local log = mcp.log_path(server.name)
      health.warn(text .. (error and (": " .. error) or ""), log and { "its log: " .. log, ":AgentMcp restart " .. server.name } or nil)
    elseif server.status == "needsTrust" then
      health.warn(text, { "answer the trust question, or :AgentMcp restart " .. server.name .. " to be asked again" })
    else
      health.info(text)
    end
  end
  for _, problem in ipairs(listing.problems or {}) do
    health.warn("configuration: " .. problem)
  end
end

local function report_server(ask, server_info, capabilities, root)
  if report_capabilities(server_info, capabilities) then
    report_models(ask)
    local session_id, listing = report_workspace(ask, root)
    report_mcp(ask, session_id, listing)
  end
end

function M.check()
  health.start("agentls")
  local version = vim.version()
  local nvim = ("Neovim %d.%d.%d"):format(version.major, version.minor, version.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok(nvim)
  else
    health.error(nvim .. ": agentls needs 0.10 or newer")
  end

  local agentls = require("agentls")
  if not agentls.is_configured() then
    health.info("require(\"agentls\").setup() was not called: the defaults apply")
  end
  agentls.ensure_setup()
  local config = require("agentls.config")
  local cmd = config.options.cmd
  local path = vim.fn.exepath(cmd[1])
  if path == "" then
    health.error(("server command %q: %q is not executable"):format(table.concat(cmd, " "), cmd[1]), {
      "pip install agentls (or install it from the repository: pip install -e /path/to/agentls)",
      "or point setup{ cmd = { '/path/to/venv/bin/agentls', 'serve' } } at it",
    })
    return
  end
  health.ok(("server command: %s (%s)"):format(table.concat(cmd, " "), path))
  if config.options.per_user_server then
    local socket = config.socket()
    health.ok(("per-user server: on (%s, through %s): runs go on when Neovim quits; :AgentPanel comes back to "
      .. "the workspace's session"):format(socket and ("socket " .. socket) or "the server's default socket",
      table.concat(config.server_cmd(), " ")))
  else
    health.info("per-user server: off (one server per Neovim; per_user_server = true keeps runs going when Neovim quits)")
  end

  local root = config.root_dir()
  health.info("workspace: " .. root)

  local agentls_client = require("agentls.client")
  local client = agentls_client.get()
  if client then
    health.ok(("running: client %d, %d attached buffers"):format(client.id, vim.tbl_count(client.attached_buffers)))
    report_server(function(method, params)
      return agentls_client.request_sync(method, params, 5000)
    end, client.server_info, client.server_capabilities, root)
    return
  end
  health.info(config.options.per_user_server
    and "not connected: starting the server command once to ask (not the per-user server)"
    or "not running: starting it once to ask")
  local init, err = probe(cmd, config.options.cmd_env, agentls_client.init_options(), 10000, function(ask, result)
    report_server(ask, result.serverInfo, result.capabilities, root)
  end)
  if not init then
    health.error("the server did not start: " .. err)
  elseif init.error then
    health.error("initialize failed: " .. tostring(init.error.message))
  end
end

return M
