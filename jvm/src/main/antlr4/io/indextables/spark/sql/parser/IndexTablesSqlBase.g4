/*
 * IndexTables SQL commands. Statements this grammar does not accept are handed to Spark's parser
 * unchanged (see IndexTables4SparkSqlParser). INDEXTABLES and TANTIVY4SPARK are interchangeable.
 * Each command is one alternative of `statement`. MERGE SPLITS takes no INDEXTABLES keyword, as
 * upstream's; COMPACT INDEXTABLES is upstream's alias of CHECKPOINT INDEXTABLES.
 */
grammar IndexTablesSqlBase;

singleStatement
    : statement ';'* EOF
    ;

statement
    : (CHECKPOINT | COMPACT) indexTables target            #checkpoint
    | MERGE SPLITS target
        (WHERE whereClause=predicateToken)?
        (TARGET SIZE targetSize=alphanumericValue)?
        (MAX DEST SPLITS maxDestSplits=alphanumericValue)?
        (MAX SOURCE SPLITS PER MERGE maxSourceSplitsPerMerge=alphanumericValue)?
                                                           #mergeSplits
    | DESCRIBE indexTables MERGE JOBS                      #describeMergeJobs
    | DESCRIBE indexTables STATE target                    #describeState
    | DESCRIBE indexTables TRANSACTION LOG target (INCLUDE ALL)?
                                                           #describeTransactionLog
    | DESCRIBE indexTables HISTORY target                  #describeHistory
    | DESCRIBE indexTables DISK CACHE                      #describeDiskCache
    | DESCRIBE indexTables STORAGE STATS                   #describeStorageStats
    | DESCRIBE indexTables ENVIRONMENT                     #describeEnvironment
    | DESCRIBE indexTables COMPONENT SIZES target (WHERE where=predicateToken)?
                                                           #describeComponentSizes
    | FLUSH indexTables SEARCHER CACHE                     #flushSearcherCache
    | FLUSH indexTables DISK CACHE                         #flushDiskCache
    | INVALIDATE indexTables TRANSACTION LOG CACHE (FOR target)?
                                                           #invalidateTransactionLogCache
    | PREWARM indexTables CACHE target
        (FOR SEGMENTS '(' segments=identifierList ')')?
        (ON FIELDS '(' fields=identifierList ')')?
        (WITH PERWORKER PARALLELISM OF parallelism=INTEGER_VALUE)?
        (WHERE where=predicateToken)?                      #prewarmCache
    | PURGE (INDEXTABLE | indexTables) target
        (OLDER THAN olderThan=INTEGER_VALUE olderUnit=timeUnit)?
        (TRANSACTION LOG RETENTION logRetention=INTEGER_VALUE logUnit=timeUnit)?
        (DRY RUN)?                                         #purgeIndexTable
    | DROP indexTables PARTITIONS FROM target
        (WHERE predicate)?                                 #dropPartitions
    | TRUNCATE indexTables TIME TRAVEL target (DRY RUN)?   #truncateTimeTravel
    | REPAIR INDEXFILES TRANSACTION LOG source=STRING
        AT LOCATION destination=STRING                     #repairIndexFiles
    | BUILD indexTables COMPANION FOR format=identifier source=STRING
        buildClause* AT LOCATION location=STRING buildClause* (DRY RUN)?
                                                           #buildCompanion
    | STOP indexTables COMPANION STREAM AT LOCATION location=STRING
                                                           #stopCompanionStream
    ;

// A clause of BUILD INDEXTABLES COMPANION, before or after AT LOCATION. A clause that starts
// with a word no clause starts with is taken whole, up to AT, DRY or the end, and refused by
// name (the builder's error lists the clauses).
buildClause
    : INCLUDE COLUMNS '(' identifierList ')'                      #includeColumnsClause
    | EXCLUDE COLUMNS '(' identifierList ')'                      #excludeColumnsClause
    | INDEXING MODES '(' indexingMode (',' indexingMode)* ')'     #indexingModesClause
    | FASTFIELDS MODE fieldsMode=alphanumericValue                   #fastFieldsModeClause
    | TARGET INPUT SIZE size=alphanumericValue                    #targetInputSizeClause
    | WRITER HEAP SIZE size=alphanumericValue                     #writerHeapSizeClause
    | WHERE buildPredicate                                        #buildWhereClause
    | FROM VERSION version=INTEGER_VALUE                          #fromVersionClause
    | FROM SNAPSHOT snapshotId=INTEGER_VALUE                      #fromSnapshotClause
    | CATALOG catalogName=STRING                                  #catalogClause
    | WAREHOUSE warehouse=STRING                                  #warehouseClause
    | WITH STREAMING POLL INTERVAL interval=INTEGER_VALUE
        unit=pollUnit                                             #streamingClause
    | name=IDENTIFIER (~(AT | DRY | ';'))*                        #unknownBuildClause
    ;

// `column: 'mode'`, either side quoted or not.
indexingMode
    : column=modeWord ':' kind=modeWord
    ;

modeWord
    : identifier | STRING
    ;

// A partition predicate, as written, up to the next clause.
buildPredicate
    : (~(INCLUDE | EXCLUDE | INDEXING | FASTFIELDS | TARGET | WRITER | FROM | AT | DRY | WITH
        | ';'))+
    ;

pollUnit
    : SECONDS | MINUTES
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

// A value of a MERGE SPLITS clause: 100M, 5G, 12, or a quoted string.
alphanumericValue
    : IDENTIFIER | INTEGER_VALUE | STRING
    ;

// The WHERE predicate's tokens, up to the next clause; the builder takes the text as written.
predicateToken
    : .*?
    ;

target
    : path=STRING                                          #pathTarget
    | qualifiedName                                        #tableTarget
    ;

identifierList
    : identifier (',' identifier)*
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
    : CHECKPOINT | COMPACT | DESCRIBE | INDEXTABLES | TANTIVY4SPARK | STATE | TRANSACTION | LOG
    | HISTORY | INCLUDE | ALL | DISK | CACHE | STORAGE | STATS | ENVIRONMENT | COMPONENT | SIZES
    | FLUSH | SEARCHER | INVALIDATE | FOR | PREWARM | SEGMENTS | ON | FIELDS | WITH | PERWORKER
    | PARALLELISM | OF | MERGE | SPLITS | TARGET | SIZE | MAX | DEST | SOURCE | PER | JOBS
    | PURGE | INDEXTABLE | OLDER | THAN | DAYS | HOURS | RETENTION | DRY | RUN | DROP
    | PARTITIONS | FROM | WHERE | TRUNCATE | TIME | TRAVEL | REPAIR | INDEXFILES | AT | LOCATION
    | BUILD | COMPANION | EXCLUDE | COLUMNS | INDEXING | MODES | FASTFIELDS | MODE | INPUT | WRITER
    | HEAP | VERSION | SNAPSHOT | CATALOG | WAREHOUSE | STREAMING | POLL | INTERVAL | SECONDS
    | MINUTES | STOP | STREAM
    ;

CHECKPOINT: C H E C K P O I N T;
COMPACT: C O M P A C T;
DESCRIBE: D E S C R I B E | D E S C;
INDEXTABLES: I N D E X T A B L E S;
TANTIVY4SPARK: T A N T I V Y '4' S P A R K;
STATE: S T A T E;
TRANSACTION: T R A N S A C T I O N;
LOG: L O G;
HISTORY: H I S T O R Y;
INCLUDE: I N C L U D E;
ALL: A L L;
DISK: D I S K;
CACHE: C A C H E;
STORAGE: S T O R A G E;
STATS: S T A T S;
ENVIRONMENT: E N V I R O N M E N T;
COMPONENT: C O M P O N E N T;
SIZES: S I Z E S;
WHERE: W H E R E;
FLUSH: F L U S H;
SEARCHER: S E A R C H E R;
INVALIDATE: I N V A L I D A T E;
FOR: F O R;
PREWARM: P R E W A R M;
SEGMENTS: S E G M E N T S;
ON: O N;
FIELDS: F I E L D S;
WITH: W I T H;
PERWORKER: P E R W O R K E R;
PARALLELISM: P A R A L L E L I S M;
OF: O F;
MERGE: M E R G E;
SPLITS: S P L I T S;
TARGET: T A R G E T;
SIZE: S I Z E;
MAX: M A X;
DEST: D E S T;
SOURCE: S O U R C E;
PER: P E R;
JOBS: J O B S;
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
TRUNCATE: T R U N C A T E;
TIME: T I M E;
TRAVEL: T R A V E L;
REPAIR: R E P A I R;
INDEXFILES: I N D E X F I L E S;
AT: A T;
LOCATION: L O C A T I O N;
BUILD: B U I L D;
COMPANION: C O M P A N I O N;
VERSION: V E R S I O N;
SNAPSHOT: S N A P S H O T;
STREAMING: S T R E A M I N G;
STOP: S T O P;
STREAM: S T R E A M;
POLL: P O L L;
INTERVAL: I N T E R V A L;
SECONDS: S E C O N D S;
MINUTES: M I N U T E S;
CATALOG: C A T A L O G;
WAREHOUSE: W A R E H O U S E;
EXCLUDE: E X C L U D E;
COLUMNS: C O L U M N S;
INDEXING: I N D E X I N G;
MODES: M O D E S;
FASTFIELDS: F A S T F I E L D S;
MODE: M O D E;
INPUT: I N P U T;
WRITER: W R I T E R;
HEAP: H E A P;

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
fragment F: [fF]; fragment G: [gG]; fragment H: [hH]; fragment I: [iI]; fragment J: [jJ];
fragment K: [kK]; fragment L: [lL]; fragment M: [mM]; fragment N: [nN]; fragment O: [oO];
fragment P: [pP]; fragment Q: [qQ]; fragment R: [rR]; fragment S: [sS]; fragment T: [tT];
fragment U: [uU]; fragment V: [vV]; fragment W: [wW]; fragment X: [xX]; fragment Y: [yY];
fragment Z: [zZ];

SIMPLE_COMMENT: '--' ~[\r\n]* '\r'? '\n'? -> channel(HIDDEN);
BRACKETED_COMMENT: '/*' .*? '*/' -> channel(HIDDEN);
WS: [ \r\n\t]+ -> channel(HIDDEN);

// Anything else: the statement is not ours.
UNRECOGNIZED: .;
