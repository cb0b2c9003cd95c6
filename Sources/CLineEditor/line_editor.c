// The REPL's line editor: GNU readline, opened at run time (see include/line_editor.h for why).
// readline's headers are included for their types only; every function and variable is reached
// through a pointer found with dlsym, so the executable does not link the library.
#include "line_editor.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <readline/readline.h>
#include <readline/history.h>

#define LE_FUNCTIONS(X) \
    X(rl_callback_handler_install) X(rl_callback_handler_remove) X(rl_callback_read_char) \
    X(rl_callback_sigcleanup) X(rl_free_line_state) X(rl_replace_line) X(rl_echo_signal_char) \
    X(rl_crlf) X(rl_resize_terminal) X(rl_cleanup_after_signal) X(rl_reset_after_signal) \
    X(rl_forced_update_display) X(rl_clear_visible_line) X(rl_on_new_line) X(rl_redisplay) \
    X(add_history) X(stifle_history) X(read_history) X(append_history) \
    X(history_truncate_file) X(history_get)

#define LE_VARIABLES(X) \
    X(rl_readline_name) X(rl_catch_signals) X(rl_catch_sigwinch) \
    X(rl_attempted_completion_function) X(rl_completer_word_break_characters) \
    X(rl_attempted_completion_over) X(rl_completion_append_character) X(rl_line_buffer) \
    X(rl_point) X(history_base) X(history_length)

// __typeof__ does not evaluate its operand: naming readline's symbols here references none.
static struct {
#define LE_FIELD(name) __typeof__(&name) name;
    LE_FUNCTIONS(LE_FIELD)
    LE_VARIABLES(LE_FIELD)
#undef LE_FIELD
} le;

static int le_state;            // 0: not tried, 1: open, -1: failed (le_reason says why)
static char le_reason[300];

static void le_try_open(void) {
    const char *names[] = {"libreadline.so.8", "libreadline.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && lib == NULL; i++) {
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (lib == NULL) {
        const char *why = dlerror();
        snprintf(le_reason, sizeof le_reason, "GNU readline could not be loaded (%s)", why ? why : "libreadline.so.8 not found");
        le_state = -1;
        return;
    }
#define LE_LOOKUP(name) \
    if ((le.name = (__typeof__(le.name))dlsym(lib, #name)) == NULL) { \
        snprintf(le_reason, sizeof le_reason, "the loaded GNU readline has no %s", #name); \
        le_state = -1; \
        return; \
    }
    LE_FUNCTIONS(LE_LOOKUP)
    LE_VARIABLES(LE_LOOKUP)
#undef LE_LOOKUP
    le_state = 1;
}

int le_open(char *error, size_t size) {
    if (le_state == 0) le_try_open();
    if (le_state < 0 && error != NULL && size > 0) snprintf(error, size, "%s", le_reason);
    return le_state > 0;
}

void le_configure(const char *name, const char *word_breaks, le_completer completer) {
    *le.rl_readline_name = strdup(name);
    *le.rl_catch_signals = 0;                 // the REPL handles signals through the loop
    *le.rl_catch_sigwinch = 0;
    *le.rl_attempted_completion_function = completer;
    *le.rl_completer_word_break_characters = strdup(word_breaks);
}

void le_callback_handler_install(const char *prompt, le_line_handler handler) {
    le.rl_callback_handler_install(prompt, handler);
}
void le_callback_handler_remove(void) { le.rl_callback_handler_remove(); }
void le_callback_read_char(void) { le.rl_callback_read_char(); }

void le_discard_line_after_interrupt(int signal) {
    le.rl_free_line_state();
    le.rl_callback_sigcleanup();
    le.rl_replace_line("", 0);
    *le.rl_point = 0;
    le.rl_echo_signal_char(signal);
    le.rl_crlf();
}

int le_line_is_empty(void) {
    const char *line = *le.rl_line_buffer;
    return line == NULL || line[0] == 0;
}

void le_resize_terminal(void) { le.rl_resize_terminal(); }
void le_cleanup_after_signal(void) { le.rl_cleanup_after_signal(); }
void le_reset_after_signal(void) {
    le.rl_reset_after_signal();
    le.rl_forced_update_display();
}
void le_clear_visible_line(void) { le.rl_clear_visible_line(); }
void le_redraw_after_output(void) {
    le.rl_on_new_line();
    le.rl_redisplay();
}

void le_completion_plain(void) {
    *le.rl_attempted_completion_over = 1;
    *le.rl_completion_append_character = 0;
}
const char *le_line_buffer(void) { return *le.rl_line_buffer; }

void le_add_history(const char *line) { le.add_history(line); }
void le_stifle_history(int max) { le.stifle_history(max); }
int le_read_history(const char *path) { return le.read_history(path); }
int le_append_history(int count, const char *path) { return le.append_history(count, path); }
int le_history_truncate_file(const char *path, int lines) { return le.history_truncate_file(path, lines); }
int le_history_length(void) { return *le.history_length; }
const char *le_history_line(int i) {
    HIST_ENTRY *entry = le.history_get(*le.history_base + i);
    return entry ? entry->line : NULL;
}
