//! pom.xml and MSBuild projects, read with `quick-xml`: dependency, plugin, item and group
//! elements as deletion candidates. Files with a DOCTYPE or ENTITY declaration are refused.

use std::ops::Range;

use super::types::{
    Levels, ManifestEdit, ManifestError, ManifestKind, line_end, line_number, line_start,
    only_blanks_before, parse_error, rest_is_trivia,
};

struct XmlOpen {
    name: String,
    candidate: Option<usize>,
}

struct XmlCandidate {
    level: usize,
    /// Where the deletion starts if the element is alone on its lines (comments above included).
    line_start: usize,
    elem_start: usize,
    name: String,
    detail: Option<String>,
    group_id: Option<String>,
    artifact_id: Option<String>,
    text: String,
    ordinal: usize,
    range: Option<Range<usize>>,
}

fn xml_is_candidate(kind: ManifestKind, name: &str, parent: Option<&str>) -> bool {
    match kind {
        ManifestKind::PomXml => matches!(
            (name, parent),
            ("dependency", Some("dependencies"))
                | ("plugin", Some("plugins"))
                | ("module", Some("modules"))
                | ("profile", Some("profiles"))
        ),
        _ => name == "ItemGroup" || name == "PropertyGroup" || parent == Some("ItemGroup"),
    }
}

/// Line start of the comments directly above the element starting at `elem_start` (each comment
/// alone on its lines, no blank line in between), or the element's own line start.
fn xml_comments_above(b: &[u8], elem_start: usize, comments: &[Range<usize>]) -> usize {
    let mut top = line_start(b, elem_start);
    for c in comments.iter().rev() {
        if !(only_blanks_before(b, c.start) && rest_is_trivia(b, c.end, None))
            || line_end(b, c.end) != top
        {
            break;
        }
        top = line_start(b, c.start);
    }
    top
}

pub(super) fn xml_candidates(
    kind: ManifestKind,
    src: &str,
) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    use quick_xml::events::Event;
    let name_of_kind = kind.display_name();
    let refuse = |reason| ManifestError::Refused {
        kind: name_of_kind,
        reason,
    };
    if src.contains("<!ENTITY") {
        return Err(refuse("the document contains an ENTITY declaration"));
    }
    let b = src.as_bytes();
    let mut reader = quick_xml::Reader::from_str(src);
    {
        let config = reader.config_mut();
        config.check_comments = true;
        config.check_end_names = true;
        config.allow_unmatched_ends = false;
        config.expand_empty_elements = false;
        config.trim_text(false);
    }
    let position = |p: u64| usize::try_from(p).unwrap_or(usize::MAX).min(b.len());
    let mut stack: Vec<XmlOpen> = Vec::new();
    let mut cands: Vec<XmlCandidate> = Vec::new();
    let mut comments: Vec<Range<usize>> = Vec::new();
    let mut ordinals: std::collections::HashMap<String, usize> = Default::default();
    let mut root: Option<String> = None;
    let mut root_closed = false;
    loop {
        let before = position(reader.buffer_position());
        let event = reader.read_event().map_err(|e| {
            let at = position(reader.error_position());
            parse_error(kind, Some(at), format!("{e} (line {})", line_number(b, at)))
        })?;
        let after = position(reader.buffer_position());
        let fail = |message: &str| {
            parse_error(
                kind,
                Some(before),
                format!("{message} (line {})", line_number(b, before)),
            )
        };
        match event {
            Event::DocType(content) => {
                return Err(refuse(if content.contains("ENTITY") {
                    "the document contains an ENTITY declaration"
                } else {
                    "the document contains a DOCTYPE declaration"
                }));
            }
            Event::Start(ref e) | Event::Empty(ref e) => {
                for attribute in e.attributes() {
                    attribute.map_err(|err| fail(&format!("bad attribute: {err}")))?;
                }
                let name = e.local_name().as_ref().to_string();
                if stack.is_empty() {
                    if root.is_some() {
                        return Err(fail("more than one root element"));
                    }
                    root = Some(name.clone());
                }
                let parent = stack.last().map(|o| o.name.as_str());
                let candidate = if xml_is_candidate(kind, &name, parent) {
                    let level = stack.iter().filter(|o| o.candidate.is_some()).count();
                    let attr = |key: &str| {
                        e.attributes()
                            .flatten()
                            .find(|a| a.key.local_name().as_ref() == key)
                            .map(|a| a.value.into_owned())
                    };
                    let detail = if name == "ItemGroup" || name == "PropertyGroup" {
                        attr("Condition").map(|c| format!("Condition `{c}`"))
                    } else {
                        attr("Include")
                            .or_else(|| attr("Update"))
                            .or_else(|| attr("Remove"))
                    };
                    let ordinal = ordinals.entry(name.clone()).or_insert(0);
                    *ordinal += 1;
                    cands.push(XmlCandidate {
                        level,
                        line_start: xml_comments_above(b, before, &comments),
                        elem_start: before,
                        name: name.clone(),
                        detail,
                        group_id: None,
                        artifact_id: None,
                        text: String::new(),
                        ordinal: *ordinal,
                        range: None,
                    });
                    Some(cands.len() - 1)
                } else {
                    None
                };
                comments.clear();
                if matches!(event, Event::Start(_)) {
                    stack.push(XmlOpen { name, candidate });
                } else {
                    if let Some(ci) = candidate {
                        cands[ci].range = Some(before..after);
                    }
                    if stack.is_empty() {
                        root_closed = true;
                    }
                }
            }
            Event::End(_) => {
                comments.clear();
                let Some(open) = stack.pop() else {
                    return Err(fail("unmatched end tag"));
                };
                if let Some(ci) = open.candidate {
                    cands[ci].range = Some(cands[ci].elem_start..after);
                }
                if stack.is_empty() {
                    root_closed = true;
                }
            }
            Event::Text(text) => {
                let content: &str = &text;
                if content.trim().is_empty() {
                    continue;
                }
                comments.clear();
                if stack.is_empty() {
                    return Err(fail("text outside the root element"));
                }
                let n = stack.len();
                if let Some(ci) = stack[n - 1].candidate {
                    cands[ci].text.push_str(content.trim());
                } else if n >= 2
                    && let Some(ci) = stack[n - 2].candidate
                {
                    let slot = match stack[n - 1].name.as_str() {
                        "groupId" => &mut cands[ci].group_id,
                        "artifactId" => &mut cands[ci].artifact_id,
                        "id" => &mut cands[ci].detail,
                        _ => continue,
                    };
                    slot.get_or_insert_with(|| content.trim().to_string());
                }
            }
            Event::GeneralRef(reference) => {
                comments.clear();
                if stack.is_empty() {
                    return Err(fail("reference outside the root element"));
                }
                if reference.is_char_ref() {
                    match reference.resolve_char_ref() {
                        Ok(Some(_)) => {}
                        _ => return Err(fail("invalid character reference")),
                    }
                } else if !matches!(&*reference, "lt" | "gt" | "amp" | "apos" | "quot") {
                    return Err(fail("reference to an undeclared entity"));
                }
            }
            Event::CData(_) => {
                comments.clear();
                if stack.is_empty() {
                    return Err(fail("CDATA outside the root element"));
                }
            }
            Event::Comment(_) => comments.push(before..after),
            Event::Decl(_) | Event::PI(_) => comments.clear(),
            Event::Eof => break,
        }
        if root_closed && !stack.is_empty() {
            return Err(fail("content after the root element"));
        }
    }
    if !stack.is_empty() {
        return Err(parse_error(
            kind,
            Some(b.len()),
            format!(
                "unclosed element `{}`",
                stack.last().map_or("", |o| &o.name)
            ),
        ));
    }
    let expected = if kind == ManifestKind::PomXml {
        "project"
    } else {
        "Project"
    };
    match root {
        Some(ref r) if r == expected => {}
        Some(r) => {
            return Err(ManifestError::Shape {
                kind: name_of_kind,
                message: format!("the root element is `{r}`, not `{expected}`"),
            });
        }
        None => {
            return Err(ManifestError::Shape {
                kind: name_of_kind,
                message: "there is no root element".to_string(),
            });
        }
    }
    let mut levels = Levels::new(src);
    for c in cands {
        let Some(range) = c.range.clone() else {
            continue;
        };
        let delete = if only_blanks_before(b, range.start) && rest_is_trivia(b, range.end, None) {
            c.line_start..line_end(b, range.end)
        } else {
            range
        };
        levels.push(c.level, xml_label(kind, &c), vec![delete]);
    }
    Ok(levels.finish())
}

fn xml_label(kind: ManifestKind, c: &XmlCandidate) -> String {
    let file = kind.display_name();
    let coordinates = match (&c.group_id, &c.artifact_id) {
        (Some(g), Some(a)) => Some(format!("{g}:{a}")),
        (None, Some(a)) => Some(a.clone()),
        _ => None,
    };
    match (kind, c.name.as_str()) {
        (ManifestKind::PomXml, "dependency" | "plugin") => match coordinates {
            Some(co) => format!("{} `{co}` of {file}", c.name),
            None => format!("{} #{} of {file}", c.name, c.ordinal),
        },
        (ManifestKind::PomXml, "module") if !c.text.is_empty() => {
            format!("module `{}` of {file}", c.text)
        }
        (ManifestKind::PomXml, _) => match &c.detail {
            Some(id) => format!("{} `{id}` of {file}", c.name),
            None => format!("{} #{} of {file}", c.name, c.ordinal),
        },
        (_, "ItemGroup" | "PropertyGroup") => match &c.detail {
            Some(condition) => format!("`{}` #{} ({condition}) of {file}", c.name, c.ordinal),
            None => format!("`{}` #{} of {file}", c.name, c.ordinal),
        },
        _ => match &c.detail {
            Some(include) => format!("`{}` `{include}` of {file}", c.name),
            None => format!("`{}` #{} of {file}", c.name, c.ordinal),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::candidates;
    use super::super::tests::*;
    use super::*;

    #[test]
    fn pom_dependencies_plugins_and_comments() {
        let levels = levels_of(ManifestKind::PomXml, POM);
        assert_eq!(
            labels(&levels)[0],
            [
                "module `core` of pom.xml",
                "dependency `com.google.code.gson:gson` of pom.xml",
                "dependency `org.slf4j:slf4j-api` of pom.xml",
                "dependency `junit:junit` of pom.xml",
                "plugin `org.apache.maven.plugins:maven-compiler-plugin` of pom.xml",
                "profile `ci` of pom.xml",
            ]
        );
        assert_eq!(labels(&levels)[1], ["dependency `a:b` of pom.xml"]);
        let gson = find(&levels, "dependency `com.google.code.gson:gson` of pom.xml");
        assert_eq!(
            applied(POM, gson),
            POM.replace(
                "    <!-- JSON support -->\n    <dependency>\n      <groupId>com.google.code.gson</groupId>\n      <artifactId>gson</artifactId>\n      <version>2.10.1</version>\n    </dependency>\n",
                ""
            )
        );
        let module = find(&levels, "module `core` of pom.xml");
        assert!(applied(POM, module).contains("  <modules>\n  </modules>\n"));
    }

    #[test]
    fn msbuild_items_and_groups() {
        let levels = levels_of(ManifestKind::MsBuild, CSPROJ);
        assert_eq!(
            labels(&levels)[0],
            [
                "`PropertyGroup` #1 of MSBuild project",
                "`ItemGroup` #1 of MSBuild project",
                "`ItemGroup` #2 (Condition `'$(Configuration)' == 'Debug'`) of MSBuild project",
            ]
        );
        assert_eq!(
            labels(&levels)[1],
            [
                "`PackageReference` `Newtonsoft.Json` of MSBuild project",
                "`PackageReference` `Serilog` of MSBuild project",
                "`PackageReference` `xunit` of MSBuild project",
                "`ProjectReference` `..\\Lib\\Lib.csproj` of MSBuild project",
                "`Compile` `Legacy\\**` of MSBuild project",
                "`None` `appsettings.json` of MSBuild project",
                "`Content` `wwwroot\\**` of MSBuild project",
            ]
        );
        let serilog = find(&levels, "`PackageReference` `Serilog` of MSBuild project");
        assert_eq!(
            applied(CSPROJ, serilog),
            CSPROJ.replace(
                "    <PackageReference Include=\"Serilog\" Version=\"3.1.1\" />\n",
                ""
            )
        );
        let xunit = find(&levels, "`PackageReference` `xunit` of MSBuild project");
        assert_eq!(
            applied(CSPROJ, xunit),
            CSPROJ.replace(
                "    <PackageReference Include=\"xunit\">\n      <Version>2.6.2</Version>\n    </PackageReference>\n",
                ""
            )
        );
        // Elements sharing a line are cut exactly, without their neighbours.
        let src =
            "<Project><ItemGroup><None Include=\"a\"/><None Include=\"b\"/></ItemGroup></Project>";
        let levels = levels_of(ManifestKind::MsBuild, src);
        let a = find(&levels, "`None` `a` of MSBuild project");
        assert_eq!(
            applied(src, a),
            "<Project><ItemGroup><None Include=\"b\"/></ItemGroup></Project>"
        );
        check_all(ManifestKind::MsBuild, src);
    }

    #[test]
    fn xml_refusals_and_errors() {
        let doctype = "<?xml version=\"1.0\"?>\n<!DOCTYPE project>\n<project></project>\n";
        assert!(matches!(
            candidates(ManifestKind::PomXml, doctype.as_bytes()),
            Err(ManifestError::Refused { reason, .. }) if reason.contains("DOCTYPE")
        ));
        let entity = "<?xml version=\"1.0\"?>\n<!DOCTYPE project [\n<!ENTITY x SYSTEM \"file:///etc/passwd\">\n]>\n<project>&x;</project>\n";
        let err = candidates(ManifestKind::PomXml, entity.as_bytes()).unwrap_err();
        assert!(matches!(err, ManifestError::Refused { .. }));
        assert!(err.to_string().contains("ENTITY"), "{err}");
        let bad: &[(ManifestKind, &str)] = &[
            (ManifestKind::PomXml, "<project><dependencies></project>"),
            (ManifestKind::PomXml, "<project>"),
            (
                ManifestKind::PomXml,
                "<project></project><project></project>",
            ),
            (ManifestKind::PomXml, "<project a=\"1\" a=\"2\"></project>"),
            (ManifestKind::PomXml, "text<project></project>"),
            (ManifestKind::PomXml, "<project>&undefined;</project>"),
            (ManifestKind::PomXml, "<Project></Project>"),
            (ManifestKind::MsBuild, "<project></project>"),
            (ManifestKind::MsBuild, ""),
            (ManifestKind::MsBuild, "<Project><!-- a -- b --></Project>"),
        ];
        for (kind, src) in bad {
            assert!(
                candidates(*kind, src.as_bytes()).is_err(),
                "{kind:?} accepted {src:?}"
            );
        }
    }
}
