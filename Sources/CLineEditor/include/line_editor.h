// GNU readline for the REPL, opened with dlopen the first time the prompt starts, so that
// `lunet script.lua` and `lunet -e` never load readline and its terminfo library (about 0.4 ms of
// every start, measured in docs/benchmarks.md). Each function forwards to readline's own of the
// same name without the `le_` prefix; readline's globals are reached through setters and getters.
#ifndef LUNET_LINE_EDITOR_H
#define LUNET_LINE_EDITOR_H

#include <stddef.h>

typedef void (*le_line_handler)(char *line);
typedef char **(*le_completer)(const char *text, int start, int end);

/// Opens readline once; 1 when it is usable, else 0 with the reason in `error`.
int le_open(char *error, size_t size);

void le_configure(const char *name, const char *word_breaks, le_completer completer);
void le_callback_handler_install(const char *prompt, le_line_handler handler);
void le_callback_handler_remove(void);
void le_callback_read_char(void);

/// What Ctrl-C at the prompt does: drop the line being edited and echo ^C on a new line.
void le_discard_line_after_interrupt(int signal);
/// The line being edited is empty (or there is none).
int le_line_is_empty(void);
void le_resize_terminal(void);
void le_cleanup_after_signal(void);
void le_reset_after_signal(void);
/// Clears the prompt line, so that output can be written where it was.
void le_clear_visible_line(void);
/// Draws the prompt and the line again after output.
void le_redraw_after_output(void);

/// For a completer: no file-name fallback, nothing appended after a match.
void le_completion_plain(void);
/// The line being edited (for a completer), or NULL.
const char *le_line_buffer(void);

void le_add_history(const char *line);
void le_stifle_history(int max);
int le_read_history(const char *path);
int le_append_history(int count, const char *path);
int le_history_truncate_file(const char *path, int lines);
int le_history_length(void);
/// The text of history entry i (0 is the oldest kept), or NULL.
const char *le_history_line(int i);

#endif
