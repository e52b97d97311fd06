-- The Neovim plugin's end-to-end suite: the feature files below, one after the other in one
-- Neovim, one workspace and one server (a server starts in about a second; the features
-- share it instead of each starting its own), against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/run.lua [AGENTLS_EXECUTABLE [FEATURE...]]
--
-- The server command is the argument, else $AGENTLS_CMD, else `agentls` on PATH; the features
-- named after it run (in the order below), else all of them. Each test writes its faux script,
-- then starts a new session (a session reads the script when it is created). Each feature's
-- output starts with "== FEATURE" (on stdout and stderr) and ends with "FEATURE: N passed, M
-- failed"; the last line is "N passed, M failed" for the whole suite, and the exit code is
-- non-zero when a test failed. Each feature file also runs alone (`-l tests/review.lua`).
-- tree.lua and mcp.lua run alone: they need workspaces of their own.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

--- In this order: health's first :checkhealth needs a Neovim without a server, review
--- leaves the server in the review mode, and safety restarts it with options of its own.
local FEATURES = {
  "health",
  "runs",
  "permissions",
  "edits",
  "models",
  "panel",
  "bash",
  "prompt",
  "context",
  "sessions",
  "changes",
  "review",
  "setup",
  "safety",
}

local h = require("helpers")
h.suite = true
h.start()

local wanted = {}
for i = 2, #arg do
  wanted[arg[i]] = true
  if not vim.tbl_contains(FEATURES, arg[i]) then
    error(("no feature %q; the features: %s"):format(arg[i], table.concat(FEATURES, ", ")))
  end
end

for _, feature in ipairs(FEATURES) do
  if #arg < 2 or wanted[feature] then
    for _, stream in ipairs({ io.stdout, io.stderr }) do
      stream:write(("\n== %s\n"):format(feature))
      stream:flush()
    end
    local passed, failed = h.counts()
    local ok, err = xpcall(dofile, debug.traceback, here .. "/" .. feature .. ".lua")
    if not ok then -- outside a test: the feature's remaining tests did not run
      h.test(feature .. ".lua ran to its end", function()
        error(err, 0)
      end)
    end
    local now_passed, now_failed = h.counts()
    io.stdout:write(("%s: %d passed, %d failed\n"):format(feature, now_passed - passed, now_failed - failed))
  end
end

h.suite = false
h.finish()
