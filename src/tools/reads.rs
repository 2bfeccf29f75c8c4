//! What the read tools share (read_file, file_read, read_many_files), as
//! `writes.rs` is for the write tools: opening a target for reading, the
//! messages for a failed read, the block for a media file. Tools do not
//! import each other; they import this.

use std::sync::Arc;

use rmcp::model::{ContentBlock, ResourceContents};

use super::{State, ToolError};
use crate::discovery::ignore_rules;
use crate::fs::reading::{self, ReadFailure};
use crate::text::filekind::Media;

/// Which spelling of a line range the caller uses (read_file's `offset` and
/// `limit`, or `start_line` and `end_line`); notes and hints answer in the
/// same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeStyle {
    OffsetLimit,
    StartEnd,
}

/// A file opened for one of the read tools, with the names messages use.
pub struct ReadTarget {
    pub opened: reading::Opened,
    /// Absolute request path.
    pub abs: String,
    /// Relative to the primary root (absolute outside it).
    pub rel: String,
    pub display: std::path::PathBuf,
}

/// Resolves, checks `.geminiignore` and opens `raw` for reading: the cheap
/// part of every read, done before deciding where the reading runs.
pub fn open_target(
    state: &Arc<State>,
    raw: &str,
    style: RangeStyle,
) -> Result<ReadTarget, ToolError> {
    let guard = &state.guard;
    let resolved = guard
        .resolve(raw)
        .map_err(|r| super::refusal_message(state, r, super::file_outside))?;
    let abs = resolved.display().display().to_string();
    if resolved.exists()
        && !resolved.is_dir()
        && ignore_rules::is_gemini_ignored(guard, resolved.root().path(), resolved.real(), false)
    {
        return Err(ToolError::new(format!(
            "File path '{abs}' is ignored by configured ignore patterns."
        )));
    }
    let opened =
        reading::open(guard, &resolved).map_err(|f| read_failure_message(&abs, f, style))?;
    state
        .seen
        .read(resolved.display(), opened.real(), opened.version().clone());
    Ok(ReadTarget {
        opened,
        rel: guard.relative_display(resolved.display()),
        display: resolved.into_display(),
        abs,
    })
}

/// The messages shared by the read tools for each [`ReadFailure`].
pub fn read_failure_message(abs: &str, failure: ReadFailure, style: RangeStyle) -> ToolError {
    let message = match failure {
        ReadFailure::NotFound => format!("File not found: {abs}"),
        ReadFailure::IsDirectory => format!("Path is a directory, not a file: {abs}"),
        ReadFailure::TooLarge { size, text } => {
            let mut m = format!(
                "File size exceeds the 20MB limit: {abs} ({}MB)",
                reading::megabytes(size)
            );
            if text {
                m.push_str(match style {
                    RangeStyle::OffsetLimit => {
                        ". Read it in parts instead: pass 'offset' and 'limit' (for example \
                         offset: 0, limit: 2000) and page on from there."
                    }
                    RangeStyle::StartEnd => {
                        ". Read it in parts instead: pass 'start_line' and 'end_line' (for \
                         example start_line: 1, end_line: 500) and page on from there."
                    }
                });
            }
            m
        }
        ReadFailure::NotRegular(why) => {
            format!("Cannot read {abs}: {why}. Only regular files can be read.")
        }
        ReadFailure::Io(e) => super::io_message(abs, &e),
    };
    ToolError(message)
}

/// The MCP block for a media file: image and audio blocks, or an embedded
/// resource for PDF and video.
pub fn media_block(
    kind: Media,
    mime: &str,
    base64: String,
    path: &std::path::Path,
) -> ContentBlock {
    match kind {
        Media::Image => ContentBlock::image(base64, mime),
        Media::Audio => ContentBlock::audio(base64, mime),
        Media::Video | Media::Pdf => {
            let uri = format!("file://{}", path.display());
            ContentBlock::resource(ResourceContents::blob(base64, uri).with_mime_type(mime))
        }
    }
}
