// Runs Gemini CLI's own tool implementations (@google/gemini-cli-core) the
// way Gemini CLI does: `new Config({...})`, `await config.initialize()`, then
// `tool.build(params).execute(signal)`. What the model would see is the
// thrown validation message, the error message of a failed result, or the
// llmContent of a successful one.

import path from 'node:path';
import { createHash } from 'node:crypto';

/** Gemini's tool name for each of ours, per version. */
export const GEMINI_NAMES = {
  '0.24': {
    read_file: 'read_file',
    write_file: 'write_file',
    replace: 'replace',
    list_directory: 'list_directory',
    glob: 'glob',
    search: 'search_file_content',
    read_many_files: 'read_many_files',
  },
  '0.61': {
    read_file: 'read_file',
    write_file: 'write_file',
    replace: 'replace',
    list_directory: 'list_directory',
    glob: 'glob',
    search: 'grep_search',
    read_many_files: 'read_many_files',
  },
};

const CLASSES = {
  read_file: 'ReadFileTool',
  write_file: 'WriteFileTool',
  replace: 'EditTool',
  list_directory: 'LSTool',
  glob: 'GlobTool',
  search: 'RipGrepTool',
  read_many_files: 'ReadManyFilesTool',
};

/**
 * Gemini CLI asks a model to repair failed edits and over-escaped content.
 * There is no model here: the client fails every request, which Gemini CLI
 * treats like a correction that timed out (the original result stands).
 */
const NO_MODEL = {
  generateJson: async () => {
    throw new Error('no model in the parity harness');
  },
  generateContent: async () => {
    throw new Error('no model in the parity harness');
  },
  generateEmbedding: async () => {
    throw new Error('no model in the parity harness');
  },
  getHistory: () => [],
};

export function mediaMarker(mime, base64) {
  const digest = createHash('sha256').update(base64).digest('hex').slice(0, 16);
  return `[media ${mime} ${digest}]`;
}

/** Gemini's llmContent (string, Part or Part[]) as one text. */
function partsText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(partsText).join('');
  if (content && content.inlineData) return mediaMarker(content.inlineData.mimeType, content.inlineData.data);
  if (content && typeof content.text === 'string') return content.text;
  return JSON.stringify(content);
}

export class Gemini {
  /**
   * @param {object} core the imported @google/gemini-cli-core module
   * @param {string} version '0.24' or '0.61'
   * @param {string[]} roots workspace directories, target directory first
   */
  static async create(core, version, roots) {
    const [target, ...more] = roots;
    const config = new core.Config({
      sessionId: 'gemini-parity',
      targetDir: target,
      cwd: target,
      debugMode: false,
      model: 'gemini-2.5-pro',
      telemetry: { enabled: false },
      usageStatisticsEnabled: false,
      mcpEnabled: false,
      includeDirectories: more,
    });
    await config.initialize();
    for (const dir of more) config.getWorkspaceContext().addDirectory(dir);
    config.getBaseLlmClient = () => NO_MODEL;
    config.getGeminiClient = () => NO_MODEL;
    const bus = config.getMessageBus();
    const tools = {};
    for (const [ours, cls] of Object.entries(CLASSES)) {
      tools[ours] = new core[cls](config, bus);
    }
    const g = new Gemini();
    g.version = version;
    g.config = config;
    g.tools = tools;
    g.target = target;
    return g;
  }

  /** The declaration Gemini sends the model for one of our tools. */
  declaration(tool) {
    const t = this.tools[tool];
    const schema = typeof t.getSchema === 'function' ? t.getSchema() : t.schema;
    return { name: schema.name, description: schema.description, parameters: schema.parametersJsonSchema };
  }

  /** Runs one call; returns { error, text }. */
  async call(tool, params) {
    const controller = new AbortController();
    const signal = this.version === '0.24' ? controller.signal : { abortSignal: controller.signal };
    // Gemini CLI runs in its project directory; ripgrep reads --ignore-file
    // patterns relative to the working directory.
    const before = process.cwd();
    process.chdir(this.target);
    try {
      let invocation;
      try {
        invocation = this.tools[tool].build(structuredClone(params));
      } catch (e) {
        return { error: true, text: e.message };
      }
      const result = await invocation.execute(signal);
      if (result.error) return { error: true, text: result.error.message };
      return { error: false, text: partsText(result.llmContent) };
    } catch (e) {
      return { error: true, text: `(thrown) ${e.message}` };
    } finally {
      process.chdir(before);
    }
  }
}

export function resolveCore(modulesDir, version) {
  return path.join(modulesDir, `gemini-core-${version}`, 'dist', 'index.js');
}
