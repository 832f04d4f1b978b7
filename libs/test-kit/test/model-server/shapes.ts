/**
 * Request bodies shaped like the real CLIs' (research/providers.md §3 and §6): the fields and tool schemas each CLI
 * was seen to send, trimmed to what the script and the protocols read, plus a few the server must ignore.
 */

const objectSchema = (properties: Record<string, unknown>, required: ReadonlyArray<string>) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false
})

// codex 0.171.0: POST /v1/responses
export const CODEX_TOOLS = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a command in a PTY",
    strict: false,
    parameters: objectSchema(
      {
        cmd: { type: "string" },
        justification: { type: "string" },
        login: { type: "boolean" },
        max_output_tokens: { type: "number" }
      },
      ["cmd"]
    )
  },
  { type: "function", name: "write_stdin", strict: false, parameters: objectSchema({ chars: { type: "string" } }, []) },
  { type: "custom", name: "apply_patch", description: "Edit files", format: { type: "grammar", syntax: "lark" } },
  { type: "web_search" }
]

export const codexUser = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] })

export const codexRequest = (input: ReadonlyArray<unknown>, tools: ReadonlyArray<unknown> = CODEX_TOOLS) => ({
  model: "gpt-5.5",
  instructions: "You are Codex.",
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "<permissions instructions>" }] },
    codexUser("<environment_context><cwd>/tmp/ws</cwd></environment_context>"),
    ...input
  ],
  tools,
  tool_choice: "auto",
  parallel_tool_calls: true,
  reasoning: null,
  store: false,
  stream: true,
  include: ["reasoning.encrypted_content"],
  prompt_cache_key: "01a22889-c6df-7003-afda-1b9400e6a30c"
})

// claude 2.1.197: POST /v1/messages?beta=true
export const CLAUDE_BASH = {
  name: "Bash",
  description: "Executes a given bash command",
  input_schema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    ...objectSchema(
      {
        command: { type: "string" },
        timeout: { type: "number" },
        description: { type: "string" },
        run_in_background: { type: "boolean" },
        dangerouslyDisableSandbox: { type: "boolean" }
      },
      ["command"]
    )
  }
}
export const CLAUDE_TOOLS = [
  {
    name: "Agent",
    description: "Launch an agent",
    input_schema: objectSchema({ prompt: { type: "string" } }, ["prompt"])
  },
  CLAUDE_BASH,
  {
    name: "Read",
    description: "Read a file",
    input_schema: objectSchema({ file_path: { type: "string" } }, ["file_path"])
  }
]

export const claudeRequest = (messages: ReadonlyArray<unknown>, tools: ReadonlyArray<unknown> = CLAUDE_TOOLS) => ({
  model: "claude-opus-4-8",
  max_tokens: 64000,
  stream: true,
  system: [{ type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." }],
  messages,
  tools,
  metadata: { user_id: "user_fake" }
})

// gemini 0.61.0: POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse
export const GEMINI_TOOLS = [
  {
    functionDeclarations: [
      {
        name: "read_file",
        description: "Reads a file",
        parametersJsonSchema: objectSchema({ file_path: { type: "string" } }, ["file_path"])
      },
      {
        name: "run_shell_command",
        description: "Runs a shell command with bash -c",
        parametersJsonSchema: objectSchema(
          { command: { type: "string" }, description: { type: "string" }, dir_path: { type: "string" } },
          ["command"]
        )
      }
    ]
  }
]

export const geminiRequest = (contents: ReadonlyArray<unknown>, tools: ReadonlyArray<unknown> = GEMINI_TOOLS) => ({
  contents,
  systemInstruction: { role: "user", parts: [{ text: "You are an interactive CLI agent." }] },
  generationConfig: { temperature: 0, topP: 1, thinkingConfig: { includeThoughts: true } },
  tools
})

// opencode 1.18.33 (@ai-sdk/openai-compatible): POST /v1/chat/completions
export const OPENCODE_TOOLS = [
  {
    type: "function",
    function: {
      name: "bash",
      description: "Executes a bash command",
      parameters: objectSchema(
        {
          command: { type: "string" },
          timeout: { type: "number" },
          workdir: { type: "string" },
          description: { type: "string" }
        },
        ["command", "description"]
      )
    }
  },
  {
    type: "function",
    function: { name: "read", parameters: objectSchema({ filePath: { type: "string" } }, ["filePath"]) }
  }
]

export const opencodeRequest = (messages: ReadonlyArray<unknown>, tools: ReadonlyArray<unknown> = OPENCODE_TOOLS) => ({
  model: "fake-model",
  max_tokens: 8192,
  messages: [{ role: "system", content: "You are opencode, an interactive CLI tool." }, ...messages],
  tools,
  tool_choice: "auto",
  stream: true,
  stream_options: { include_usage: true }
})

// pedelec-agent (our Ollama loop): POST /api/chat
export const PAGE_TOOLS = [
  {
    type: "function",
    function: {
      name: "page_title",
      description: "Reads the page title",
      parameters: objectSchema({ tab: { type: "integer" } }, ["tab"])
    }
  }
]

export const ollamaRequest = (messages: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
  model: "scripted-model",
  messages,
  tools: PAGE_TOOLS,
  ...extra
})
