//! Every Windows path rule, on every platform: parsing and checking names
//! directly, resolution against a file system made of a table.

use std::collections::HashMap;

use super::*;

fn root() -> WinPath {
    parse(r"C:\Root", None, Names::Request).unwrap()
}

fn request(raw: &str) -> Result<WinPath, Problem> {
    parse(raw, Some(&root()), Names::Request)
}

fn shown(raw: &str) -> String {
    request(raw).unwrap().display()
}

#[test]
fn drive_letters_take_either_separator_and_any_case() {
    for spelling in [
        r"C:\Root\a\b",
        "C:/Root/a/b",
        r"c:\Root/a\b",
        r"C:\\Root\\a\\\b",
    ] {
        assert_eq!(shown(spelling), r"C:\Root\a\b", "{spelling}");
    }
    assert_eq!(shown(r"d:\"), r"D:\");
    assert_eq!(shown("D:/"), r"D:\");
}

#[test]
fn drive_relative_paths_are_refused() {
    assert!(matches!(request("C:x"), Err(Problem::DriveRelative('C'))));
    assert!(matches!(request("c:"), Err(Problem::DriveRelative('C'))));
    assert!(
        request("C:x")
            .unwrap_err()
            .message("C:x")
            .contains("drive C:")
    );
}

#[test]
fn relative_and_rooted_paths_resolve_against_the_base() {
    assert_eq!(shown(r"a\b.txt"), r"C:\Root\a\b.txt");
    assert_eq!(shown("./a/./b"), r"C:\Root\a\b");
    assert_eq!(shown(r"\Other\x"), r"C:\Other\x");
    assert!(matches!(
        parse("a", None, Names::Request),
        Err(Problem::NotAbsolute)
    ));
}

#[test]
fn dotdot_is_applied_to_the_spelling_and_stops_at_the_drive() {
    assert_eq!(shown(r"a\..\b"), r"C:\Root\b");
    assert_eq!(shown(r"..\Root_evil\x"), r"C:\Root_evil\x");
    assert_eq!(shown(r"C:\..\..\x"), r"C:\x");
    assert_eq!(shown(r"\\srv\share\..\..\x"), r"\\srv\share\x");
    assert!(!request(r"..\Root_evil").unwrap().starts_with(&root()));
}

#[test]
fn unc_and_verbatim_forms_name_the_same_places() {
    let unc = request(r"\\Server\Share\dir\f.txt").unwrap();
    assert_eq!(unc.display(), r"\\Server\Share\dir\f.txt");
    assert_eq!(unc.verbatim(), r"\\?\UNC\Server\Share\dir\f.txt");
    for same in [
        r"//server/share/dir/F.TXT",
        r"\\?\UNC\server\SHARE\dir\f.txt",
        r"\\?\unc\SERVER\share\DIR\f.txt",
    ] {
        assert!(request(same).unwrap().same(&unc), "{same}");
    }
    let disk = request(r"\\?\C:\Root\x").unwrap();
    assert_eq!(disk.display(), r"C:\Root\x");
    assert_eq!(disk.verbatim(), r"\\?\C:\Root\x");
    assert!(disk.starts_with(&root()));
    assert_eq!(request(r"\\?\C:\").unwrap().display(), r"C:\");
    assert!(!request(r"\\srv\C$\Root\x").unwrap().starts_with(&root()));
}

#[test]
fn device_namespace_and_incomplete_shares_are_refused() {
    for raw in [
        r"\\.\C:\Root\x",
        r"\\.\pipe\name",
        r"//./PhysicalDrive0",
        r"//?/C:/Root",
        r"\\?\GLOBALROOT\Device\HarddiskVolume1",
        r"\\?\Volume{00000000-0000-0000-0000-000000000000}\x",
        r"\??\C:\Root",
        r"\\?\pipe\x",
    ] {
        assert_eq!(request(raw).unwrap_err(), Problem::DeviceNamespace, "{raw}");
    }
    for raw in [r"\\server", r"\\server\", r"\\?\UNC\server"] {
        assert_eq!(request(raw).unwrap_err(), Problem::IncompleteShare, "{raw}");
    }
}

#[test]
fn verbatim_paths_take_names_literally() {
    assert_eq!(
        request(r"\\?\C:\Root\..\x").unwrap_err(),
        Problem::DotInVerbatim
    );
    assert!(matches!(
        request(r"\\?\C:\Root/x"),
        Err(Problem::BadCharacter(_, '/'))
    ));
    // Reported verbatim paths (final paths) hold whatever the disk holds.
    let reported = parse(r"\\?\C:\Root\nul\a.", None, Names::Reported).unwrap();
    assert_eq!(reported.names(), ["Root", "nul", "a."]);
}

#[test]
fn containment_is_case_insensitive_by_whole_names() {
    let r = root();
    for inside in [
        r"c:\root\x",
        r"C:\ROOT",
        r"c:/RoOt/Sub/deeper",
        r"\\?\c:\root\x",
    ] {
        assert!(request(inside).unwrap().starts_with(&r), "{inside}");
    }
    for outside in [
        r"C:\Root_evil\x",
        r"C:\Roo",
        r"D:\Root\x",
        r"C:\",
        r"C:\Other",
    ] {
        assert!(!request(outside).unwrap().starts_with(&r), "{outside}");
    }
    assert!(
        same_name("straße", "STRAßE"),
        "no full case mapping: ß stays ß"
    );
    assert!(same_name("ÉTÉ", "été"));
    assert!(!same_name("a", "b"));
}

#[test]
fn alternate_data_streams_are_refused() {
    for raw in [
        r"file.txt::$DATA",
        r"C:\Root\file.txt::$DATA",
        r"C:\Root\file.txt:stream",
        r"file:stream:$DATA",
        r"dir:s\file",
        r"C:\Root\:hidden",
    ] {
        assert!(
            matches!(request(raw), Err(Problem::Stream(_))),
            "{raw}: {:?}",
            request(raw)
        );
    }
    let message = request("f.txt::$DATA").unwrap_err().message("f.txt::$DATA");
    assert!(message.contains("alternate data stream"), "{message}");
}

#[test]
fn reserved_device_names_are_refused_with_or_without_extensions() {
    for raw in [
        "CON",
        "con",
        "NUL",
        "nul.txt",
        "NUL.tar.gz",
        "aux",
        "PRN.log",
        "COM1",
        "com9.txt",
        "COM0",
        "LPT1",
        "lpt3.dat",
        "COM¹",
        "LPT².txt",
        "CONIN$",
        "conout$",
        "nul .txt",
        r"dir\CON\x",
        r"C:\Root\nul",
    ] {
        assert!(
            matches!(request(raw), Err(Problem::Reserved(_))),
            "{raw}: {:?}",
            request(raw)
        );
    }
    for fine in [
        "console",
        "nul_",
        "null.txt",
        "COM10",
        "LPT",
        "xCOM1",
        "com1x.txt",
        "CONOUT",
        ".nul",
        "my.nul",
    ] {
        assert!(request(fine).is_ok(), "{fine}");
    }
}

#[test]
fn trailing_dots_and_spaces_are_refused_everywhere_in_the_path() {
    for raw in [
        "a.txt.",
        "a.txt ",
        "dir.\\x",
        r"dir \x",
        "...",
        r"C:\Root\x. . ",
    ] {
        assert!(
            matches!(request(raw), Err(Problem::TrailingDotOrSpace(_))),
            "{raw}: {:?}",
            request(raw)
        );
    }
    // A leading dot or space is an ordinary name; `.` and `..` are steps.
    assert_eq!(shown(".gitignore"), r"C:\Root\.gitignore");
    assert_eq!(shown(" lead"), r"C:\Root\ lead");
}

#[test]
fn characters_windows_refuses_are_refused() {
    for (raw, c) in [
        ("a<b", '<'),
        ("a>b", '>'),
        ("a\"b", '"'),
        ("a|b", '|'),
        ("a?b", '?'),
        ("*.rs", '*'),
        ("a\u{1}b", '\u{1}'),
        ("tab\there", '\t'),
    ] {
        assert_eq!(
            request(raw).unwrap_err(),
            Problem::BadCharacter(raw.to_string(), c),
            "{raw}"
        );
    }
}

#[test]
fn file_uri_paths_lose_the_slash_before_a_drive() {
    assert_eq!(from_uri_path("/C:/Root/x"), "C:/Root/x");
    assert_eq!(from_uri_path("/c:"), "c:");
    assert_eq!(from_uri_path("/home/x"), "/home/x");
    assert_eq!(from_uri_path("relative"), "relative");
}

/// A file system made of a table, as Windows would answer: names compared
/// case-insensitively, 8.3 aliases, links and junctions (both `Link`) with
/// targets resolved on Windows' terms, loops after a number of hops.
#[derive(Default)]
struct Table {
    /// Upper-cased display path → what is there, under its real spelling.
    nodes: HashMap<String, (String, Node)>,
}

#[derive(Clone)]
enum Node {
    Dir,
    File,
    /// A symbolic link or junction, and its target as stored.
    Link(String),
    /// An 8.3 short name, and the long name it stands for.
    Short(String),
}

impl Table {
    fn with(mut self, path: &str, node: Node) -> Table {
        self.nodes
            .insert(path.to_uppercase(), (path.to_string(), node));
        self
    }

    fn node(&self, path: &WinPath) -> Option<(WinPath, Node)> {
        let (real, node) = self.nodes.get(&path.display().to_uppercase())?;
        let real = parse(real, None, Names::Reported).unwrap();
        Some((real, node.clone()))
    }

    /// Follows `path` name by name, like the kernel.
    fn follow(&self, path: &WinPath, hops: &mut usize) -> io::Result<(WinPath, bool)> {
        let mut cur = path.prefix_root();
        let mut is_dir = true;
        for name in path.names() {
            let mut here = cur.join(name);
            loop {
                let Some((real, node)) = self.node(&here) else {
                    return Err(io::ErrorKind::NotFound.into());
                };
                match node {
                    Node::Dir => (cur, is_dir) = (real, true),
                    Node::File => (cur, is_dir) = (real, false),
                    Node::Short(long) => {
                        here = here.truncated(here.names().len() - 1).join(&long);
                        continue;
                    }
                    Node::Link(target) => {
                        *hops += 1;
                        if *hops > 31 {
                            return Err(io::Error::from_raw_os_error(LOOP_ERROR));
                        }
                        let parent = real.truncated(real.names().len() - 1);
                        let target = parse(&target, Some(&parent), Names::Reported).unwrap();
                        (cur, is_dir) = self.follow(&target, hops)?;
                    }
                }
                break;
            }
        }
        Ok((cur, is_dir))
    }
}

impl Lookup for Table {
    /// Whether it is a directory.
    type Found = bool;

    fn final_path(&self, path: &WinPath) -> io::Result<(WinPath, bool)> {
        self.follow(path, &mut 0)
    }

    fn is_dir(found: &bool) -> bool {
        *found
    }

    fn entry(&self, path: &WinPath) -> io::Result<Option<Entry>> {
        let parent = path.truncated(path.names().len().saturating_sub(1));
        let Some(name) = path.names().last() else {
            return Ok(Some(Entry::Directory));
        };
        let (parent, _) = self.final_path(&parent)?;
        let mut here = parent.join(name);
        loop {
            return Ok(match self.node(&here) {
                None => None,
                Some((_, Node::Dir)) => Some(Entry::Directory),
                Some((_, Node::File)) => Some(Entry::File),
                Some((_, Node::Link(_))) => Some(Entry::Link),
                Some((_, Node::Short(long))) => {
                    here = parent.join(&long);
                    continue;
                }
            });
        }
    }
}

fn tree() -> Table {
    Table::default()
        .with(r"C:\Root", Node::Dir)
        .with(r"C:\Root\Sub", Node::Dir)
        .with(r"C:\Root\Sub\file.txt", Node::File)
        .with(r"C:\Root\LongDirectoryName", Node::Dir)
        .with(r"C:\Root\LONGDI~1", Node::Short("LongDirectoryName".into()))
        .with(r"C:\Root\.git", Node::Dir)
        .with(r"C:\Root\GIT~1", Node::Short(".git".into()))
        .with(r"C:\Root\.git\config", Node::File)
        .with(r"C:\Root\inside_link", Node::Link(r"Sub\file.txt".into()))
        .with(r"C:\Root\up_link", Node::Link(r"..\Outside".into()))
        .with(r"C:\Root\junction_out", Node::Link(r"C:\Outside".into()))
        .with(
            r"C:\Root\junction_in",
            Node::Link(r"\\?\C:\Root\Sub".into()),
        )
        .with(
            r"C:\Root\rooted_link",
            Node::Link(r"\Outside\secret".into()),
        )
        .with(r"C:\Root\dangling", Node::Link(r"C:\Root\nothing".into()))
        .with(r"C:\Root\dangling_out", Node::Link(r"D:\nothing".into()))
        .with(r"C:\Root\loop_a", Node::Link("loop_b".into()))
        .with(r"C:\Root\loop_b", Node::Link("loop_a".into()))
        .with(r"C:\Root\Second", Node::Link(r"C:\Second".into()))
        .with(r"C:\Second", Node::Dir)
        .with(r"C:\Outside", Node::Dir)
        .with(r"C:\Outside\secret", Node::File)
        .with(r"C:\Program Files", Node::Dir)
        .with(r"C:\PROGRA~1", Node::Short("Program Files".into()))
        .with(r"C:\Program Files\app", Node::Dir)
}

fn real_of(raw: &str) -> Result<(String, bool), String> {
    let path = request(raw).map_err(|p| format!("{p:?}"))?;
    match resolve(&path, &tree()) {
        Ok(Resolution::Exists { real, found: _ }) => Ok((real.display(), true)),
        Ok(Resolution::Missing { real }) => Ok((real.display(), false)),
        Err(Fault::Dangles) => Err("dangles".into()),
        Err(Fault::Loops) => Err("loops".into()),
        Err(Fault::Io(e)) => Err(format!("io: {e}")),
    }
}

#[test]
fn resolution_gives_long_names_and_true_case() {
    assert_eq!(
        real_of(r"c:\root\sub\FILE.TXT"),
        Ok((r"C:\Root\Sub\file.txt".into(), true))
    );
    assert_eq!(
        real_of(r"C:\Root\LONGDI~1"),
        Ok((r"C:\Root\LongDirectoryName".into(), true))
    );
    assert_eq!(
        real_of(r"C:\Root\longdi~1\new\file.rs"),
        Ok((r"C:\Root\LongDirectoryName\new\file.rs".into(), false))
    );
}

#[test]
fn short_names_cannot_bypass_containment_or_the_git_rule() {
    // `GIT~1` is `.git`: the real path names it, so rules on `.git` hold.
    assert_eq!(
        real_of(r"C:\Root\GIT~1\config"),
        Ok((r"C:\Root\.git\config".into(), true))
    );
    assert_eq!(
        real_of(r"C:\Root\git~1\hooks\pre-commit"),
        Ok((r"C:\Root\.git\hooks\pre-commit".into(), false))
    );
    // A short spelling of a path outside stays outside, however spelled.
    let roots = [parse(r"C:\Program Files\app", None, Names::Request).unwrap()];
    let (real, _) = real_of(r"C:\PROGRA~1\app").unwrap();
    let real = parse(&real, None, Names::Reported).unwrap();
    assert!(roots.iter().any(|r| real.starts_with(r)));
    let (real, _) = real_of(r"C:\PROGRA~1\other").unwrap();
    let real = parse(&real, None, Names::Reported).unwrap();
    assert!(!roots.iter().any(|r| real.starts_with(r)));
}

#[test]
fn links_and_junctions_are_followed_alike() {
    assert_eq!(
        real_of(r"C:\Root\inside_link"),
        Ok((r"C:\Root\Sub\file.txt".into(), true))
    );
    assert_eq!(
        real_of(r"C:\Root\junction_in\file.txt"),
        Ok((r"C:\Root\Sub\file.txt".into(), true))
    );
    assert_eq!(
        real_of(r"C:\Root\junction_out\secret"),
        Ok((r"C:\Outside\secret".into(), true))
    );
    assert_eq!(
        real_of(r"C:\Root\up_link"),
        Ok((r"C:\Outside".into(), true))
    );
    assert_eq!(
        real_of(r"C:\Root\rooted_link"),
        Ok((r"C:\Outside\secret".into(), true))
    );
    // A link from one root into another is followed; the caller's
    // containment check accepts it when both are roots.
    assert_eq!(
        real_of(r"C:\Root\Second\x"),
        Ok((r"C:\Second\x".into(), false))
    );
}

#[test]
fn missing_names_below_an_outward_link_are_outside() {
    assert_eq!(
        real_of(r"C:\Root\junction_out\new\f.txt"),
        Ok((r"C:\Outside\new\f.txt".into(), false))
    );
}

#[test]
fn dangling_and_looping_links_are_faults() {
    assert_eq!(real_of(r"C:\Root\dangling"), Err("dangles".into()));
    assert_eq!(real_of(r"C:\Root\dangling\below"), Err("dangles".into()));
    assert_eq!(real_of(r"C:\Root\dangling_out"), Err("dangles".into()));
    assert_eq!(real_of(r"C:\Root\loop_a"), Err("loops".into()));
    assert_eq!(real_of(r"C:\Root\loop_b\x"), Err("loops".into()));
}

#[test]
fn a_file_used_as_a_directory_is_missing_below() {
    assert_eq!(
        real_of(r"C:\Root\Sub\file.txt\x"),
        Ok((r"C:\Root\Sub\file.txt\x".into(), false))
    );
    assert_eq!(
        real_of(r"C:\Root\inside_link\x"),
        Ok((r"C:\Root\Sub\file.txt\x".into(), false))
    );
}
