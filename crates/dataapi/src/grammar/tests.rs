use super::*;

fn field(name: &str) -> Field {
    Field {
        name: name.to_owned(),
        json_path: vec![],
    }
}

fn quant(op: QuantOp, v: &str) -> OpExpr {
    OpExpr {
        negated: false,
        op: Operation::Quant(op, None, v.to_owned()),
    }
}

#[test]
fn select_reads_columns_aliases_casts_and_star() {
    assert_eq!(select("").unwrap(), vec![]);
    assert_eq!(select("*").unwrap(), vec![SelectItem::Star]);
    assert_eq!(
        select("id, alias:name,qty::text,n:qty::double precision").unwrap(),
        vec![
            SelectItem::Column {
                alias: None,
                field: field("id"),
                cast: None
            },
            SelectItem::Column {
                alias: Some("alias".into()),
                field: field("name"),
                cast: None
            },
            SelectItem::Column {
                alias: None,
                field: field("qty"),
                cast: Some("text".into())
            },
            SelectItem::Column {
                alias: Some("n".into()),
                field: field("qty"),
                cast: Some("double precision".into())
            },
        ]
    );
    assert_eq!(
        select("\"a,b\",\"we\\\"ird\",first-name").unwrap(),
        vec![
            SelectItem::Column {
                alias: None,
                field: field("a,b"),
                cast: None
            },
            SelectItem::Column {
                alias: None,
                field: field("we\"ird"),
                cast: None
            },
            SelectItem::Column {
                alias: None,
                field: field("first-name"),
                cast: None
            },
        ]
    );
}

fn embed(name: &str, select: Vec<SelectItem>) -> SelectItem {
    SelectItem::Embed(Embed {
        name: name.into(),
        alias: None,
        hint: None,
        inner: false,
        spread: false,
        select,
    })
}

fn column(name: &str) -> SelectItem {
    SelectItem::Column {
        alias: None,
        field: field(name),
        cast: None,
    }
}

#[test]
fn select_reads_embedded_resources_to_any_depth() {
    assert_eq!(
        select("*,clients(*)").unwrap(),
        vec![SelectItem::Star, embed("clients", vec![SelectItem::Star])]
    );
    let SelectItem::Embed(e) = &select("c:clients!inner(id,name)").unwrap()[0] else {
        panic!("not an embedding")
    };
    assert_eq!(
        (e.alias.as_deref(), e.inner, e.spread, e.hint.as_deref()),
        (Some("c"), true, false, None)
    );
    assert_eq!(e.select, vec![column("id"), column("name")]);
    let SelectItem::Embed(e) = &select("...clients!fk(name)").unwrap()[0] else {
        panic!("not an embedding")
    };
    assert_eq!(
        (e.alias.as_deref(), e.inner, e.spread, e.hint.as_deref()),
        (None, false, true, Some("fk"))
    );
    // Either order of hint and join type; `!left` is the default join.
    for s in ["a:users!first_user!inner(*)", "a:users!inner!first_user(*)"] {
        let SelectItem::Embed(e) = &select(s).unwrap()[0] else {
            panic!("{s}")
        };
        assert_eq!(
            (e.hint.as_deref(), e.inner),
            (Some("first_user"), true),
            "{s}"
        );
    }
    let SelectItem::Embed(e) = &select("users!left(*)").unwrap()[0] else {
        panic!("left")
    };
    assert_eq!((e.hint.as_deref(), e.inner), (None, false));
    assert_eq!(
        select(" a ( b ( c ( id ) ) , x ) ").unwrap(),
        vec![embed(
            "a",
            vec![
                embed("b", vec![embed("c", vec![column("id")])]),
                column("x")
            ]
        )]
    );
    assert_eq!(select("clients()").unwrap(), vec![embed("clients", vec![])]);
    // Deep enough for any schema, and never deep enough to exhaust the stack.
    let nested = |n: usize| format!("{}id{}", "a(".repeat(n), ")".repeat(n));
    assert!(select(&nested(32)).is_ok());
    let e = select(&nested(20_000)).unwrap_err();
    assert_eq!(
        (e.column, e.details.as_str()),
        (66, "resources nested more than 32 deep")
    );
    // `count(…)` is not a resource, and a hint must be a name.
    assert!(select("count(id)").is_err());
    assert!(select("clients!(id)").is_err());
    assert!(select("clients!inner!fk!x(id)").is_err());
    assert!(select("alias:...clients(id)").is_err());
    let e = select("clients(id,name!x)").unwrap_err();
    assert_eq!(e.column, 16);
    assert!(select("clients(id").is_err());
}

#[test]
fn select_reads_aggregates_with_their_aliases_and_casts() {
    let agg = |s: &str| match select(s).unwrap().remove(0) {
        SelectItem::Aggregate(a) => a,
        other => panic!("{s}: {other:?}"),
    };
    let field = |name: &str| Field {
        name: name.into(),
        json_path: vec![],
    };
    assert_eq!(
        agg("count()"),
        Aggregate {
            alias: None,
            func: AggFunc::Count,
            field: None,
            cast: None
        }
    );
    assert_eq!(
        agg("n:count()::text"),
        Aggregate {
            alias: Some("n".into()),
            func: AggFunc::Count,
            field: None,
            cast: Some("text".into())
        }
    );
    assert_eq!(
        agg("total:qty::int.sum()::text"),
        Aggregate {
            alias: Some("total".into()),
            func: AggFunc::Sum,
            field: Some((field("qty"), Some("int".into()))),
            cast: Some("text".into())
        }
    );
    for (s, func) in [
        ("qty.avg()", AggFunc::Avg),
        ("qty.count()", AggFunc::Count),
        ("qty.max()", AggFunc::Max),
        ("qty.min()", AggFunc::Min),
    ] {
        assert_eq!(agg(s).func, func, "{s}");
    }
    let a = agg("data->>n.max()");
    assert_eq!(a.field.unwrap().0.json_path.len(), 1);
    // Not an aggregate: a field named `sum`, and an unknown function.
    assert!(matches!(
        select("sum").unwrap()[0],
        SelectItem::Column { .. }
    ));
    assert!(select("qty.median()").is_err());
    assert!(select("qty.sum()x").is_err());
}

#[test]
fn select_reads_json_paths() {
    let SelectItem::Column { field, .. } = &select("data->a->>0").unwrap()[0] else {
        panic!("not a column")
    };
    assert_eq!(
        field.json_path,
        vec![
            JsonOp::Arrow(JsonOperand::Key("a".into())),
            JsonOp::DoubleArrow(JsonOperand::Index("+0".into()))
        ]
    );
}

#[test]
fn select_errors_point_where_parsec_does() {
    let e = select("id,name!hint").unwrap_err();
    assert_eq!(e.column, 8);
    assert!(e.details.starts_with("unexpected \"!\""), "{}", e.details);
    assert!(select("id,").is_err());
    assert!(select("name::").is_err());
    // `$` is refused in casts: it could open a dollar-quoted string in the SQL.
    assert!(select("a::$$").is_err());
    assert!(select("a::int;drop").is_err());
    assert!(select("id)").is_err());
}

#[test]
fn operators_parse_as_postgrest_tries_them() {
    assert_eq!(op_expr("eq.5").unwrap(), quant(QuantOp::Eq, "5"));
    assert_eq!(op_expr("gte.5").unwrap(), quant(QuantOp::Gte, "5"));
    assert_eq!(op_expr("gt.5").unwrap(), quant(QuantOp::Gt, "5"));
    assert_eq!(op_expr("lte.5").unwrap(), quant(QuantOp::Lte, "5"));
    assert_eq!(op_expr("ilike.*A*").unwrap(), quant(QuantOp::ILike, "*A*"));
    assert_eq!(
        op_expr("eq.a.b,c)").unwrap(),
        quant(QuantOp::Eq, "a.b,c)"),
        "the rest is the value"
    );
    assert_eq!(op_expr("eq.").unwrap(), quant(QuantOp::Eq, ""));
    assert_eq!(
        op_expr("neq.1").unwrap().op,
        Operation::Simple(SimpleOp::Neq, "1".into())
    );
    assert_eq!(
        op_expr("cs.{a,b}").unwrap().op,
        Operation::Simple(SimpleOp::Cs, "{a,b}".into())
    );
    assert_eq!(
        op_expr("like(any).{a*,b*}").unwrap().op,
        Operation::Quant(QuantOp::Like, Some(Quantifier::Any), "{a*,b*}".into())
    );
    assert_eq!(
        op_expr("fts(english).cat").unwrap().op,
        Operation::Fts(FtsOp::Fts, Some("english".into()), "cat".into())
    );
    assert_eq!(
        op_expr("isdistinct.3").unwrap().op,
        Operation::IsDistinct("3".into())
    );
    let not = op_expr("not.eq.5").unwrap();
    assert!(not.negated);
}

#[test]
fn is_takes_its_five_values_case_insensitively() {
    for (v, want) in [
        ("is.null", IsVal::Null),
        ("is.NULL", IsVal::Null),
        ("is.not_null", IsVal::NotNull),
        ("is.true", IsVal::True),
        ("is.False", IsVal::False),
        ("is.unknown", IsVal::Unknown),
    ] {
        assert_eq!(op_expr(v).unwrap().op, Operation::Is(want), "{v}");
    }
    assert!(op_expr("is.maybe").is_err());
    assert!(op_expr("is.nullx").is_err());
    assert_eq!(
        op_expr("not.is.null").unwrap().op,
        Operation::Is(IsVal::Null)
    );
}

#[test]
fn in_lists_quote_and_escape_like_postgrest() {
    let list = |s: &str| match op_expr(s).unwrap().op {
        Operation::In(v) => v,
        other => panic!("{other:?}"),
    };
    assert_eq!(list("in.(1,2,3)"), ["1", "2", "3"]);
    assert_eq!(list("in.(\"a,b\",c)"), ["a,b", "c"]);
    assert_eq!(list("in.(\"a \\\"q\\\" b\",\"x)y\")"), ["a \"q\" b", "x)y"]);
    assert_eq!(list("in.(a b, c )"), ["a b", " c "]);
    assert_eq!(list("in.()"), [""]);
    assert_eq!(list("in.(\"unterminated,x)"), ["\"unterminated", "x"]);
    assert_eq!(
        list("in.(\"a\"b,c)"),
        ["\"a\"b", "c"],
        "a quote not followed by , or ) is plain"
    );
    assert!(op_expr("in.1,2").is_err());
    assert!(op_expr("in.(1,2").is_err());
}

#[test]
fn unknown_operators_fail_with_postgrest_wording() {
    let e = op_expr("noop.0").unwrap_err();
    assert_eq!(e.column, 1);
    assert_eq!(
        e.details,
        "unexpected \"n\" expecting \"not\" or operator (eq, gt, ...)"
    );
    assert!(op_expr("val").is_err());
    assert!(op_expr("eq5").is_err());
    assert!(op_expr("eq(some).5").is_err());
}

#[test]
fn logic_trees_nest_and_negate() {
    let t = logic_tree("or", "(a.eq.1,and(b.eq.2,c.gt.3))").unwrap();
    let LogicTree::Expr {
        negated: false,
        and: false,
        children,
    } = t
    else {
        panic!("{t:?}")
    };
    assert_eq!(children.len(), 2);
    assert_eq!(
        children[0],
        LogicTree::Stmt(Filter {
            field: field("a"),
            expr: quant(QuantOp::Eq, "1")
        })
    );
    assert!(
        matches!(&children[1], LogicTree::Expr { and: true, children, .. } if children.len() == 2)
    );

    let t = logic_tree(
        "not.and",
        "( a.in.(1,2) , not.or(b.is.null,c.not.eq.\"x,y\") )",
    )
    .unwrap();
    let LogicTree::Expr {
        negated: true,
        and: true,
        children,
    } = t
    else {
        panic!("{t:?}")
    };
    assert_eq!(
        children[0],
        LogicTree::Stmt(Filter {
            field: field("a"),
            expr: OpExpr {
                negated: false,
                op: Operation::In(vec!["1".into(), "2".into()])
            }
        })
    );
    let LogicTree::Expr {
        negated: true,
        and: false,
        children: inner,
    } = &children[1]
    else {
        panic!()
    };
    assert_eq!(
        inner[1],
        LogicTree::Stmt(Filter {
            field: field("c"),
            expr: OpExpr {
                negated: true,
                op: Operation::Quant(QuantOp::Eq, None, "x,y".into())
            }
        })
    );
    let t = logic_tree("or", "(tags.cs.{a,b},id.eq.1)").unwrap();
    let LogicTree::Expr { children, .. } = t else {
        panic!()
    };
    assert_eq!(
        children[0],
        LogicTree::Stmt(Filter {
            field: field("tags"),
            expr: OpExpr {
                negated: false,
                op: Operation::Simple(SimpleOp::Cs, "{a,b}".into())
            }
        })
    );
}

#[test]
fn logic_tree_errors_report_the_furthest_failure() {
    assert!(logic_tree("or", "()").is_err());
    let e = logic_tree("or", "(id.in.1,2,id.eq.3)").unwrap_err();
    assert_eq!(e.column, 10, "{e:?}");
    let e = logic_tree("or", "(id.eq.1,not.xor(id.eq.2))").unwrap_err();
    assert_eq!(e.column, 16, "{e:?}");
    assert!(logic_tree("or", "(a.eq.1").is_err());
    assert!(logic_tree("or", "(a.eq.1))").is_err());
}

#[test]
fn order_terms_take_direction_and_nulls() {
    assert_eq!(
        order("name.desc.nullslast, id").unwrap(),
        vec![
            OrderTerm::Column {
                field: field("name"),
                desc: Some(true),
                nulls_first: Some(false)
            },
            OrderTerm::Column {
                field: field("id"),
                desc: None,
                nulls_first: None
            },
        ]
    );
    assert_eq!(
        order("id.nullsfirst").unwrap(),
        vec![OrderTerm::Column {
            field: field("id"),
            desc: None,
            nulls_first: Some(true)
        }]
    );
    assert_eq!(
        order("clients(name).desc,id,c( \"x y\" ).asc.nullsfirst").unwrap(),
        vec![
            OrderTerm::Embed {
                name: "clients".into(),
                field: field("name"),
                desc: Some(true),
                nulls_first: None
            },
            OrderTerm::Column {
                field: field("id"),
                desc: None,
                nulls_first: None
            },
            OrderTerm::Embed {
                name: "c".into(),
                field: field("x y"),
                desc: Some(false),
                nulls_first: Some(true)
            },
        ]
    );
    for bad in [
        "id.ac",
        "id.descc",
        "id.asc.nlsfst",
        "",
        "id.asc.nullslasttt",
    ] {
        assert!(order(bad).is_err(), "{bad}");
    }
    assert_eq!(order("id.ac").unwrap_err().column, 4);
}

#[test]
fn columns_and_tree_paths() {
    assert_eq!(columns("\"k\",\"v\", other").unwrap(), ["k", "v", "other"]);
    assert!(columns("").is_err());
    assert!(columns("a,,b").is_err());
    assert_eq!(tree_path("id").unwrap(), (vec![], field("id")));
    assert_eq!(
        tree_path("clients.name").unwrap(),
        (vec!["clients".to_owned()], field("name"))
    );
    assert_eq!(tree_path("\"a.b\"").unwrap(), (vec![], field("a.b")));
    assert_eq!(
        tree_path("data->>key").unwrap().1.json_path,
        vec![JsonOp::DoubleArrow(JsonOperand::Key("key".into()))]
    );
}
