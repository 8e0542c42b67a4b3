/*
 * IndexTables SQL commands. Statements this grammar does not accept are handed to Spark's parser
 * unchanged (see IndexTables4SparkSqlParser). INDEXTABLES and TANTIVY4SPARK are interchangeable.
 * Later commands (merge, prewarm) are added as further alternatives of `statement`.
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
    | PURGE (INDEXTABLE | indexTables) target
        (OLDER THAN olderThan=INTEGER_VALUE olderUnit=timeUnit)?
        (TRANSACTION LOG RETENTION logRetention=INTEGER_VALUE logUnit=timeUnit)?
        (DRY RUN)?                                         #purgeIndexTable
    | DROP indexTables PARTITIONS FROM target
        (WHERE predicate)?                                 #dropPartitions
    | TRUNCATE indexTables TIME TRAVEL target (DRY RUN)?   #truncateTimeTravel
    | REPAIR INDEXFILES TRANSACTION LOG source=STRING
        AT LOCATION destination=STRING                     #repairIndexFiles
    ;

timeUnit
    : DAYS | HOURS
    ;

// The rest of the statement, as written: a Spark SQL predicate that Spark parses.
predicate
    : (~';')+
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
    | PURGE | INDEXTABLE | OLDER | THAN | DAYS | HOURS | RETENTION | DRY | RUN | DROP
    | PARTITIONS | FROM | WHERE | TRUNCATE | TIME | TRAVEL | REPAIR | INDEXFILES | AT | LOCATION
    ;

CHECKPOINT: C H E C K P O I N T;
DESCRIBE: D E S C R I B E | D E S C;
INDEXTABLES: I N D E X T A B L E S;
TANTIVY4SPARK: T A N T I V Y '4' S P A R K;
STATE: S T A T E;
TRANSACTION: T R A N S A C T I O N;
LOG: L O G;
HISTORY: H I S T O R Y;
PURGE: P U R G E;
INDEXTABLE: I N D E X T A B L E;
OLDER: O L D E R;
THAN: T H A N;
DAYS: D A Y S;
HOURS: H O U R S;
RETENTION: R E T E N T I O N;
DRY: D R Y;
RUN: R U N;
DROP: D R O P;
PARTITIONS: P A R T I T I O N S;
FROM: F R O M;
WHERE: W H E R E;
TRUNCATE: T R U N C A T E;
TIME: T I M E;
TRAVEL: T R A V E L;
REPAIR: R E P A I R;
INDEXFILES: I N D E X F I L E S;
AT: A T;
LOCATION: L O C A T I O N;

STRING
    : '\'' ( ~('\''|'\\') | ('\\' .) )* '\''
    | '"' ( ~('"'|'\\') | ('\\' .) )* '"'
    ;

INTEGER_VALUE: DIGIT+;

IDENTIFIER: (LETTER | DIGIT | '_')+;

BACKQUOTED_IDENTIFIER: '`' ( ~'`' | '``' )* '`';

fragment DIGIT: [0-9];
fragment LETTER: [a-zA-Z];
fragment A: [aA]; fragment B: [bB]; fragment C: [cC]; fragment D: [dD]; fragment E: [eE];
fragment F: [fF]; fragment G: [gG]; fragment H: [hH]; fragment I: [iI]; fragment K: [kK];
fragment L: [lL]; fragment M: [mM]; fragment N: [nN]; fragment O: [oO]; fragment P: [pP];
fragment R: [rR]; fragment S: [sS]; fragment T: [tT]; fragment U: [uU]; fragment V: [vV];
fragment W: [wW]; fragment X: [xX]; fragment Y: [yY];

SIMPLE_COMMENT: '--' ~[\r\n]* '\r'? '\n'? -> channel(HIDDEN);
BRACKETED_COMMENT: '/*' .*? '*/' -> channel(HIDDEN);
WS: [ \r\n\t]+ -> channel(HIDDEN);

// Anything else: the statement is not ours.
UNRECOGNIZED: .;
