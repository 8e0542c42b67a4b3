/*
 * IndexTables SQL commands. Statements this grammar does not accept are handed to Spark's parser
 * unchanged (see IndexTables4SparkSqlParser). INDEXTABLES and TANTIVY4SPARK are interchangeable.
 * Later commands (merge, purge, prewarm) are added as further alternatives of `statement`.
 */
grammar IndexTablesSqlBase;

singleStatement
    : statement ';'* EOF
    ;

statement
    : CHECKPOINT indexTables target                        #checkpoint
    | DESCRIBE indexTables STATE target                    #describeState
    | DESCRIBE indexTables TRANSACTION LOG target          #describeTransactionLog
    | DESCRIBE indexTables HISTORY target                  #describeHistory
    ;

indexTables
    : INDEXTABLES | TANTIVY4SPARK
    ;

target
    : path=STRING                                          #pathTarget
    | qualifiedName                                        #tableTarget
    ;

qualifiedName
    : identifier ('.' identifier)*
    ;

identifier
    : IDENTIFIER
    | BACKQUOTED_IDENTIFIER
    | nonReserved
    ;

nonReserved
    : CHECKPOINT | DESCRIBE | INDEXTABLES | TANTIVY4SPARK | STATE | TRANSACTION | LOG | HISTORY
    ;

CHECKPOINT: C H E C K P O I N T;
DESCRIBE: D E S C R I B E | D E S C;
INDEXTABLES: I N D E X T A B L E S;
TANTIVY4SPARK: T A N T I V Y '4' S P A R K;
STATE: S T A T E;
TRANSACTION: T R A N S A C T I O N;
LOG: L O G;
HISTORY: H I S T O R Y;

STRING
    : '\'' ( ~('\''|'\\') | ('\\' .) )* '\''
    | '"' ( ~('"'|'\\') | ('\\' .) )* '"'
    ;

IDENTIFIER: (LETTER | DIGIT | '_')+;

BACKQUOTED_IDENTIFIER: '`' ( ~'`' | '``' )* '`';

fragment DIGIT: [0-9];
fragment LETTER: [a-zA-Z];
fragment A: [aA]; fragment B: [bB]; fragment C: [cC]; fragment D: [dD]; fragment E: [eE];
fragment G: [gG]; fragment H: [hH]; fragment I: [iI]; fragment K: [kK]; fragment L: [lL];
fragment N: [nN]; fragment O: [oO]; fragment P: [pP]; fragment R: [rR]; fragment S: [sS];
fragment T: [tT]; fragment V: [vV]; fragment X: [xX]; fragment Y: [yY];

SIMPLE_COMMENT: '--' ~[\r\n]* '\r'? '\n'? -> channel(HIDDEN);
BRACKETED_COMMENT: '/*' .*? '*/' -> channel(HIDDEN);
WS: [ \r\n\t]+ -> channel(HIDDEN);

// Anything else: the statement is not ours.
UNRECOGNIZED: .;
