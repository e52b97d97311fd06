--- :checkhealth agentls: the server command, its version and capabilities, the models it offers.
---
--- When no server runs yet, the check starts the command once, does the `initialize`
--- handshake, asks `agent/listModels` and shuts it down.
local M = {}

local health = vim.health

local function frame(message)
  local body = vim.json.encode(vim.tbl_extend("force", { jsonrpc = "2.0" }, message))
  return ("Content-Length: %d\r\n\r\n%s"):format(#body, body)
end

--- Talk to a fresh server: initialize, agent/listModels, shutdown. Returns the answers by id.
local function probe(cmd, env, init_options, timeout_ms)
  local output, responses = "", {}
  local ok, process = pcall(vim.system, cmd, {
    env = env,
    stdin = true,
    stdout = function(_, data)
      output = output .. (data or "")
    end,
    stderr = function() end,
  })
  if not ok then
    return nil, tostring(process)
  end
  local function parse()
    while true do
      local header_end = output:find("\r\n\r\n", 1, true)
      local length = header_end and tonumber(output:sub(1, header_end):match("Content%-Length:%s*(%d+)"))
      if not length or #output < header_end + 3 + length then
        return
      end
      local body = output:sub(header_end + 4, header_end + 3 + length)
      output = output:sub(header_end + 4 + length)
      local decoded_ok, message = pcall(vim.json.decode, body)
      if decoded_ok and type(message) == "table" and message.id then
        responses[message.id] = message
      end
    end
  end
  local function ask(id, method, params)
    process:write(frame({ id = id, method = method, params = params }))
    vim.wait(timeout_ms, function()
      parse()
      return responses[id] ~= nil
    end, 20)
    return responses[id]
  end
  local init = ask(1, "initialize", {
    processId = vim.fn.getpid(),
    rootUri = vim.NIL,
    capabilities = vim.empty_dict(),
    initializationOptions = next(init_options) and init_options or vim.empty_dict(),
  })
  local models
  if init and init.result then
    process:write(frame({ method = "initialized", params = vim.empty_dict() }))
    models = ask(2, "agent/listModels", vim.empty_dict())
    ask(3, "shutdown", vim.NIL)
    process:write(frame({ method = "exit" }))
  end
  pcall(process.write, process, nil)
  process:wait(3000) -- killed if it has not exited by then
  if not init then
    return nil, ("no answer to initialize within %d ms"):format(timeout_ms)
  end
  return { initialize = init, models = models }
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
    return
  end
  health.ok(("protocol version %s"):format(tostring(agent.version)))
  health.info("features: " .. table.concat(agent.features or {}, ", "))
  health.info(("methods: %d (%s)"):format(#(agent.methods or {}), table.concat(agent.methods or {}, ", ")))
  local sync = capabilities.textDocumentSync
  health.info("textDocumentSync: " .. vim.inspect(sync, { newline = " ", indent = "" }))
end

local function report_models(response)
  if not response then
    return
  end
  local err = response.error or response.err -- a JSON-RPC response, or request_sync()'s answer
  if err then
    health.warn("agent/listModels failed: " .. tostring(err.message))
    return
  end
  local names = {}
  for _, model in ipairs(response.result and response.result.models or {}) do
    names[#names + 1] = model.provider .. "/" .. model.id
  end
  if #names == 0 then
    health.warn("no models: configure a provider or a faux script (initializationOptions.fauxScript), see the README")
  else
    health.ok("models: " .. table.concat(names, ", "))
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
  health.info("workspace: " .. config.root_dir())

  local client = require("agentls.client").get()
  if client then
    health.ok(("running: client %d, %d attached buffers"):format(client.id, vim.tbl_count(client.attached_buffers)))
    report_capabilities(client.server_info, client.server_capabilities)
    local params = vim.empty_dict()
    if vim.fn.has("nvim-0.11") == 1 then
      report_models(client:request_sync("agent/listModels", params, 5000))
    else
      report_models(client.request_sync("agent/listModels", params, 5000))
    end
    return
  end
  health.info("not running: starting it once to ask")
  local answers, err = probe(cmd, config.options.cmd_env, require("agentls.client").init_options(), 10000)
  if not answers then
    health.error("the server did not start: " .. err)
    return
  end
  if answers.initialize.error then
    health.error("initialize failed: " .. tostring(answers.initialize.error.message))
    return
  end
  local result = answers.initialize.result
  report_capabilities(result.serverInfo, result.capabilities)
  report_models(answers.models)
end

return M
