-- Headless Neovim driver for tests/editors/test_nvim.py.
--
-- Run as: nvim --headless --clean --cmd 'set rtp^=<editors/nvim>' -c 'luafile nvim_driver.lua'
-- with DERIVLS_NVIM_TEST pointing at a JSON config (see test_nvim.py). It uses the real plugin
-- (plugin/derivls.lua + lsp/derivls.lua, autostarted by vim.lsp.enable), records what happened in
-- each step into the JSON result file and quits. Every wait is bounded; a failing step is recorded
-- with its error and the later steps still run where they can.

local cfg = vim.json.decode(io.open(os.getenv('DERIVLS_NVIM_TEST'), 'r'):read('*a'))
local timeout = cfg.timeout_ms or 60000
local result = { steps = {}, messages = {} }

local function write_result()
  local f = assert(io.open(cfg.result, 'w'))
  f:write(vim.json.encode(result))
  f:close()
end

local only = nil -- cfg.only: run just these steps
if cfg.only then
  only = {}
  for _, name in ipairs(cfg.only) do
    only[name] = true
  end
end

local function step(name, fn)
  if only and not only[name] then
    return nil
  end
  local ok, value = xpcall(fn, debug.traceback)
  if ok then
    result.steps[name] = { ok = true, value = value }
  else
    result.steps[name] = { ok = false, error = tostring(value) }
  end
  write_result() -- keep partial results if a later step hangs
  return ok and value or nil
end

local function wait_for(what, ms, cond)
  local value
  local ok = vim.wait(ms, function()
    value = cond()
    return value ~= nil and value ~= false
  end, 50)
  if not ok then
    error('timed out after ' .. ms .. ' ms waiting for ' .. what)
  end
  return value
end

-- Keep messages (vim.notify, :echo) for the report.
local orig_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(result.messages, tostring(msg))
  return orig_notify(msg, level, opts)
end

-- The test's overrides: server command (none: the plugin's default) and settings (merged into
-- lsp/derivls.lua's config), and the plugin's options.
local cmd = cfg.cmd ~= vim.NIL and cfg.cmd or nil
vim.lsp.config('derivls', { cmd = cmd, settings = { derivls = cfg.settings } })
if cfg.inlay_hints_option ~= nil then
  vim.g.derivls_inlay_hints = cfg.inlay_hints_option
end

local function hover_text(res)
  local contents = res and res.contents
  if contents == nil then
    return ''
  end
  if type(contents) == 'string' then
    return contents
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    table.insert(parts, type(c) == 'string' and c or (c.value or ''))
  end
  return table.concat(parts, '\n')
end

local buf, client

step('open', function()
  vim.cmd.edit(vim.fn.fnameescape(cfg.derivatives))
  buf = vim.api.nvim_get_current_buf()
  return { filetype = vim.bo[buf].filetype, name = vim.api.nvim_buf_get_name(buf) }
end)

step('attach', function()
  client = wait_for('the derivls client to attach', timeout, function()
    for _, msg in ipairs(result.messages) do
      if msg:match('quit with exit code') then
        error('the server exited: ' .. msg)
      end
    end
    return vim.lsp.get_clients({ bufnr = buf, name = 'derivls' })[1]
  end)
  wait_for('the server to initialize', timeout, function()
    return client.initialized
  end)
  return {
    root_dir = client.root_dir,
    cmd = client.config.cmd,
    init_options = client.config.init_options,
    server_name = client.server_info and client.server_info.name or vim.NIL,
    has_execute_command = client.server_capabilities.executeCommandProvider ~= nil,
  }
end)

local function after_attach()
  step('diagnostics', function()
    local found = wait_for('a diagnostic on lines ' .. cfg.seeded_first .. '-' .. cfg.seeded_last, timeout, function()
      local hits = {}
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        if d.lnum >= cfg.seeded_first and d.lnum <= cfg.seeded_last then
          table.insert(hits, { lnum = d.lnum, col = d.col, message = d.message, source = d.source, severity = d.severity })
        end
      end
      return #hits > 0 and hits or nil
    end)
    return { seeded = found, total = #vim.diagnostic.get(buf) }
  end)

  step('inlay_hints_displayed', function()
    -- With the plugin's default settings (vim.g.derivls_inlay_hints unset), without touching the
    -- buffer or moving the cursor: the hints are enabled, received, and drawn as virtual text.
    local enabled = vim.lsp.inlay_hint.is_enabled({ bufnr = buf })
    if not enabled then
      error('inlay hints are not enabled for the derivls buffer')
    end
    local hints = wait_for('inlay hints to be displayed', timeout, function()
      vim.cmd('redraw')
      local got = vim.lsp.inlay_hint.get({ bufnr = buf })
      return #got > 0 and got or nil
    end)
    local labels = {}
    for i = 1, math.min(5, #hints) do
      local label = hints[i].inlay_hint.label
      if type(label) == 'table' then
        local parts = {}
        for _, p in ipairs(label) do
          table.insert(parts, p.value)
        end
        label = table.concat(parts)
      end
      table.insert(labels, { line = hints[i].inlay_hint.position.line, label = label })
    end
    local cursor = vim.api.nvim_win_get_cursor(0)
    -- The virtual text actually drawn (extmarks of the inlay hint namespace): Neovim draws the hints
    -- of the visible lines only, so look at the first entry in a second window, then close it.
    local main_win = vim.api.nvim_get_current_win()
    vim.cmd('split')
    vim.api.nvim_win_set_cursor(0, { cfg.hover_line + 1, 0 })
    vim.cmd('normal! zt')
    vim.cmd('redraw!')
    local drawn = {}
    for name, ns in pairs(vim.api.nvim_get_namespaces()) do
      if name:find('inlay') then
        for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
          local details = mark[4] or {}
          local text = {}
          for _, chunk in ipairs(details.virt_text or {}) do
            table.insert(text, chunk[1])
          end
          if #drawn < 5 then
            table.insert(drawn, { line = mark[2], text = table.concat(text) })
          end
        end
      end
    end
    vim.cmd('close')
    vim.api.nvim_set_current_win(main_win)
    return {
      enabled = enabled,
      count = #hints,
      sample = labels,
      drawn = drawn,
      cursor = cursor,
    }
  end)

  step('hover', function()
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = cfg.hover_line, character = cfg.hover_character },
    }
    local res = client:request_sync('textDocument/hover', params, timeout, buf)
    if res == nil then
      error('hover request timed out')
    end
    if res.err then
      error('hover error: ' .. vim.inspect(res.err))
    end
    return { text = hover_text(res.result) }
  end)

  step('inlay_hints', function()
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      range = { start = { line = 0, character = 0 }, ['end'] = { line = vim.api.nvim_buf_line_count(buf), character = 0 } },
    }
    local res = client:request_sync('textDocument/inlayHint', params, timeout, buf)
    if res == nil then
      error('inlayHint request timed out')
    end
    if res.err then
      error('inlayHint error: ' .. vim.inspect(res.err))
    end
    local hints = res.result or {}
    local sample = {}
    for i = 1, math.min(5, #hints) do
      local label = hints[i].label
      if type(label) == 'table' then
        local parts = {}
        for _, p in ipairs(label) do
          table.insert(parts, p.value)
        end
        label = table.concat(parts)
      end
      table.insert(sample, { line = hints[i].position.line, label = label })
    end
    return { count = #hints, sample = sample }
  end)

  step('generated_code', function()
    vim.api.nvim_set_current_buf(buf)
    vim.api.nvim_win_set_cursor(0, { cfg.generated_cursor_line + 1, 0 })
    vim.cmd('DerivlsShowGeneratedCode')
    local gen = wait_for('the derivls-generated buffer', timeout, function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_get_name(b):match('^derivls%-generated:') then
          return b
        end
      end
    end)
    local lines = vim.api.nvim_buf_get_lines(gen, 0, -1, false)
    return {
      name = vim.api.nvim_buf_get_name(gen),
      filetype = vim.bo[gen].filetype,
      modifiable = vim.bo[gen].modifiable,
      buftype = vim.bo[gen].buftype,
      text = table.concat(lines, '\n'),
    }
  end)

  step('generated_follows', function()
    -- Edit the entry shown in step generated_code: the server pushes derivls/generatedCodeChanged
    -- and the read-only view follows.
    local gen
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):match('^derivls%-generated:') then
        gen = b
      end
    end
    if gen == nil then
      error('no generated-code buffer to follow')
    end
    local line = vim.api.nvim_buf_get_lines(buf, cfg.follow_line, cfg.follow_line + 1, false)[1]
    vim.api.nvim_buf_set_text(buf, cfg.follow_line, #line, cfg.follow_line, #line, { cfg.follow_append })
    local text = wait_for('the generated view to show the edit', timeout, function()
      local t = table.concat(vim.api.nvim_buf_get_lines(gen, 0, -1, false), '\n')
      return t:find(cfg.follow_expect, 1, true) and t or nil
    end)
    return { modifiable = vim.bo[gen].modifiable, modified = vim.bo[gen].modified, text = text }
  end)

  step('code_lens', function()
    -- A code lens carrying derivls.showGeneratedCode, run the way vim.lsp.codelens.run() does
    -- (client:exec_cmd -> the plugin's vim.lsp.commands handler -> the server -> a scratch buffer).
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) } }
    local res = client:request_sync('textDocument/codeLens', params, timeout, buf)
    if res == nil then
      error('codeLens request timed out')
    end
    if res.err then
      error('codeLens error: ' .. vim.inspect(res.err))
    end
    local lens
    for _, l in ipairs(res.result or {}) do
      if l.command == nil and (client.server_capabilities.codeLensProvider or {}).resolveProvider then
        local resolved = client:request_sync('codeLens/resolve', l, timeout, buf)
        l = resolved and resolved.result or l
      end
      if l.command and l.command.command == 'derivls.showGeneratedCode' and l.range.start.line == cfg.lens_line then
        lens = l
        break
      end
    end
    if lens == nil then
      error('no derivls.showGeneratedCode code lens on line ' .. cfg.lens_line .. ' (' .. #(res.result or {}) .. ' lenses)')
    end
    local before = {}
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      before[b] = true
    end
    client:exec_cmd(lens.command, { bufnr = buf })
    local gen = wait_for('the code lens generated buffer', timeout, function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if not before[b] and vim.api.nvim_buf_get_name(b):match('^derivls%-generated:') then
          return b
        end
      end
    end)
    return {
      lenses = #(res.result or {}),
      arguments = lens.command.arguments,
      name = vim.api.nvim_buf_get_name(gen),
      filetype = vim.bo[gen].filetype,
      modifiable = vim.bo[gen].modifiable,
      text = table.concat(vim.api.nvim_buf_get_lines(gen, 0, -1, false), '\n'),
    }
  end)

  step('other_yaml', function()
    vim.cmd.edit(vim.fn.fnameescape(cfg.other_yaml))
    local other = vim.api.nvim_get_current_buf()
    vim.wait(cfg.other_wait_ms or 1000, function()
      return false
    end, 50)
    local names = {}
    for _, c in ipairs(vim.lsp.get_clients({ bufnr = other })) do
      table.insert(names, c.name)
    end
    return { filetype = vim.bo[other].filetype, clients = names }
  end)

  if cfg.server_log then
    step('server_settings', function()
      -- The stub server records what it received; give it a moment to flush.
      return wait_for('the stub server log', 5000, function()
        local f = io.open(cfg.server_log, 'r')
        if not f then
          return nil
        end
        local text = f:read('*a')
        f:close()
        local ok, decoded = pcall(vim.json.decode, text)
        return ok and decoded.configuration ~= nil and decoded or nil
      end)
    end)
  end
end

if client ~= nil then
  after_attach()
end

local function clients_of(bufnr)
  local names = {}
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    table.insert(names, c.name)
  end
  return names
end

-- FunctionsManual.cpp (issue 51): derivls attaches to it (filetype cpp) and is told of its saves; another C++ file
-- is left alone.
if client ~= nil and cfg.manual_cpp then
  step('manual_cpp', function()
    vim.cmd.edit(vim.fn.fnameescape(cfg.manual_cpp))
    local manual = vim.api.nvim_get_current_buf()
    wait_for('derivls to attach to FunctionsManual.cpp', timeout, function()
      return vim.tbl_contains(clients_of(manual), 'derivls')
    end)
    vim.api.nvim_buf_set_lines(manual, -1, -1, false, { '// edited' })
    vim.cmd.write()
    local saved = nil
    if cfg.server_log then
      saved = wait_for('the save in the stub server log', timeout, function()
        local f = io.open(cfg.server_log, 'r')
        if not f then
          return nil
        end
        local text = f:read('*a')
        f:close()
        local ok, decoded = pcall(vim.json.decode, text)
        return ok and decoded.saved and #decoded.saved > 0 and decoded or nil
      end)
    end
    return { filetype = vim.bo[manual].filetype, clients = clients_of(manual), log = saved }
  end)

  step('other_cpp', function()
    vim.cmd.edit(vim.fn.fnameescape(cfg.other_cpp))
    local other = vim.api.nvim_get_current_buf()
    vim.wait(cfg.other_wait_ms or 1000, function()
      return false
    end, 50)
    return { filetype = vim.bo[other].filetype, clients = clients_of(other) }
  end)
end

write_result()
for _, c in ipairs(vim.lsp.get_clients()) do
  c:stop()
end
vim.wait(2000, function()
  return #vim.lsp.get_clients() == 0
end, 50)
vim.cmd('qa!')
