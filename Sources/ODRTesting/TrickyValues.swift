/// Secret values that break naive quoting: quotes, `$`, backticks,
/// backslashes, newlines (inside and trailing), CRLF, tabs, `%`, leading
/// and trailing spaces, unicode. Keyed by key name.
public enum TrickyValues {
  public static let all: [String: String] = [
    "SingleQuote": "it's 'quoted''",
    "DoubleQuote": #"say "hi" \"there\""#,
    "Dollar": "$HOME ${PATH} $(id) $((1+1))",
    "Backtick": "`id` and `uname -a`",
    "Backslash": #"C:\temp\new \\server \n not a newline"#,
    "Newlines": "line one\nline two\n\nline four",
    "TrailingNewline": "ends with newline\n",
    "CarriageReturn": "crlf\r\nline",
    "Tab": "a\tb\t",
    "Percent": "100% %s %d %0A %%",
    "Spaces": "  padded value  ",
    "Unicode": "ünïcødé 🔑 日本語 \u{200B}zero-width",
    "Bang": "!important !! !$",
    "Equals": "a=b=c; x&y|z>w<v",
    "DelimiterLike": "EOF\nghadelimiter_0\nEOF",
  ]
}
